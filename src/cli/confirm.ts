/**
 * The confirmation an operator gives before a command acts on an execution: `--yes`, or "y" typed
 * at a prompt on the terminal. Without a terminal and without `--yes` there is no one to ask: the
 * command refuses rather than wait on a stdin that never answers.
 *
 * @module
 */
import { createInterface } from 'node:readline/promises';

/** Asks the operator `question` and resolves with the line they typed. */
export type Asker = (question: string) => Promise<string>;

/** What came of asking. */
export type Confirmation = 'confirmed' | 'declined' | 'no_terminal';

/** The terminal's asker (the question on stderr, the answer from stdin), or undefined when stdin or stderr is not a terminal. */
export function terminalAsker(): Asker | undefined {
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) return undefined;
  return async (question) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  };
}

/** `confirmed` with `yes`; else the answer to `question` (`y` or `yes`, any case, confirms), or `no_terminal` when there is no one to ask. */
export async function confirm(yes: boolean, ask: Asker | undefined, question: string): Promise<Confirmation> {
  if (yes) return 'confirmed';
  if (ask === undefined) return 'no_terminal';
  const answer = (await ask(`${question} [y/N] `)).trim().toLowerCase();
  return answer === 'y' || answer === 'yes' ? 'confirmed' : 'declined';
}
