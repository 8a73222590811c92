import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ConsoleController } from './console.controller.js';
import { CONSOLE_FILES, DEFAULT_CONSOLE_DIR, loadConsoleFiles } from './console-files.js';

/** The console (apps/console) served as static files at /console. */
@Module({
  controllers: [ConsoleController],
  providers: [{ provide: CONSOLE_FILES, inject: [GATEWAY_CONFIG], useFactory: (c: GatewayConfig) => loadConsoleFiles(c.DRAEL_CONSOLE_DIR ?? DEFAULT_CONSOLE_DIR) }],
})
export class ConsoleModule {}
