export * from './metrics.js';
export * from './metrics-http.js';
export * from './exposition.js';
