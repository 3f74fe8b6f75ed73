// ShelfStore
