// ShelfTesting
