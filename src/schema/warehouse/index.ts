export * from './sync.ts';
export * from './app.ts';
export * from './gateway.ts';
export * from './history.ts';
export * from './notifications.ts';
