import { Module } from '@nestjs/common';
import { ModelTurnEngine } from './model-turn.engine.js';

/** The model-turn engine shared by the chat loop and the Responses loop. */
@Module({ providers: [ModelTurnEngine], exports: [ModelTurnEngine] })
export class EngineModule {}
