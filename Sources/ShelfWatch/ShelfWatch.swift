// ShelfWatch
