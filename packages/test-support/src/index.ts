export * from './service-process.js';
