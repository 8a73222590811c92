import { Global, Module, type DynamicModule, type OnApplicationShutdown, Inject } from '@nestjs/common';
import { NatsRpcClient, type RpcClientOptions } from './rpc-client.js';

/** Provides one shared NatsRpcClient to a Nest app, drained when the app shuts down. */
@Global()
@Module({})
export class RpcClientModule implements OnApplicationShutdown {
  constructor(@Inject(NatsRpcClient) private readonly client: NatsRpcClient) {}

  static forRoot(options: RpcClientOptions): DynamicModule {
    return {
      module: RpcClientModule,
      providers: [{ provide: NatsRpcClient, useFactory: () => NatsRpcClient.connect(options) }],
      exports: [NatsRpcClient],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
