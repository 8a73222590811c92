export * from './service-process.js';
export * from './scripted-upstream.js';
export * from './gateway-process.js';
