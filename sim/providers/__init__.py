"""Provider models: prompt caches, limits, prices, faults and latency behind one interface."""
