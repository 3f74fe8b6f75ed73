// ShelfConfig
