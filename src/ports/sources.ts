// The names the upstream client and the store both speak: the two sources and the rate
// budget's buckets. Declared below both, so neither imports the other (docs/design.md, "Layers").
export type Source = 'app' | 'gateway';
export type Bucket = 'app-public' | 'app-key' | 'gateway';
