import { Module } from '@nestjs/common';
import { AdminController } from './admin.controller.js';
import { AdminTokenGuard } from './admin-token.guard.js';

@Module({ controllers: [AdminController], providers: [AdminTokenGuard] })
export class AdminModule {}
