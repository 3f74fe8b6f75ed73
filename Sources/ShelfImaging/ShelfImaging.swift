// ShelfImaging
