// ShelfDaemon
