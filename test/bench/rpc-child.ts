// A child for test/bench/rpc.test.ts: serves a few commands through bench/lib/rpc.ts's `serveRpc`.

import { serveRpc } from '../../bench/lib/rpc.js';

/** What the test asks of the child. */
export type FixtureCommand =
  | { cmd: 'echo'; value: unknown }
  | { cmd: 'fail'; message: string }
  | { cmd: 'hold' }
  | { cmd: 'release'; value: string }
  | { cmd: 'linger' }
  | { cmd: 'hang' }
  | { cmd: 'bigint' }
  | { cmd: 'crash'; code: number }
  | { cmd: 'exit' };

let held: ((value: string) => void) | undefined;
/** Commands that arrived while a `linger` ran. */
let arrived: string[] | undefined;

function failingHandler(message: string): never {
  throw new TypeError(message);
}

serveRpc<FixtureCommand>((command) => {
  arrived?.push(command.cmd);
  switch (command.cmd) {
    case 'echo':
      return command.value;
    case 'fail':
      return failingHandler(command.message);
    case 'hold':
      return new Promise<string>((resolve) => (held = resolve));
    case 'release':
      held?.(command.value);
      return 'released';
    case 'linger': {
      // Whatever else the runner sends in the next 200 ms is recorded: with `serial`, nothing.
      const seen: string[] = [];
      arrived = seen;
      return new Promise<string[]>((resolve) =>
        setTimeout(() => {
          arrived = undefined;
          resolve(seen);
        }, 200),
      );
    }
    case 'bigint':
      return 1n;
    case 'hang':
      return new Promise<never>(() => {});
    case 'crash':
      return process.exit(command.code);
    case 'exit':
      return undefined;
  }
});
