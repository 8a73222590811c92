export * from './service-process.js';
export * from './scripted-upstream.js';
export * from './gateway-process.js';
export * from './billing-for-tests.js';
export * from './sandbox-cleanup.js';
export * from './prometheus.js';
export * from './otlp-receiver.js';
export * from './module-recorder-path.js';
