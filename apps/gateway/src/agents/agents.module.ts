import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { AgentsController } from './agents.controller.js';
import { RunEventStreams } from './run-event-streams.js';

/** HTTP endpoints for hosted agents and runs (issue 9); agent-run answers behind them over NATS. */
@Module({ imports: [AuthModule], controllers: [AgentsController], providers: [RunEventStreams] })
export class AgentsModule {}
