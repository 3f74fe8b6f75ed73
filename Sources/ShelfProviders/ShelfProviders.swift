// ShelfProviders
