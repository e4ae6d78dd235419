import { createEmbeddedEngine } from './src/embedded.js';
import { reactor, type AnyReactorDefinition } from './src/index.js';
async function work(n: number): Promise<number> { return n + 1; }
function linearReactor(): AnyReactorDefinition {
  let builder = reactor('p1-linear').step('s0', { run: () => work(0) }) as any;
  for (let i = 1; i < 10; i++) builder = builder.step(`s${i}`, { args: ($: any) => ({ n: $.result(`s${i - 1}`) }), run: ({ n }: any) => work(n) });
  return builder.build();
}
const N = Number(process.env.N ?? 20000);
const definition = linearReactor();
const engine = createEmbeddedEngine();
const t0 = performance.now();
for (let r = 0; r < N; r++) { const result = await engine.run(definition, {}); if (result.status !== 'completed') throw new Error(result.status); }
const ms = performance.now() - t0;
console.log(JSON.stringify({ N, usPerRun: (ms * 1000) / N }));
