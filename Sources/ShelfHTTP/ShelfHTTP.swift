// ShelfHTTP
