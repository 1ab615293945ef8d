package serve

// CollectionsStarted is how many collections between turns this process
// started.
func CollectionsStarted() int64 { return collectionsStarted.Load() }
