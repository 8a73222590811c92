export * from './service-process.js';
export * from './scripted-upstream.js';
export * from './gateway-process.js';
export * from './billing-for-tests.js';
export * from './sandbox-cleanup.js';
export * from './own-servers.js';
