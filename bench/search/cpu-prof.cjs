// node 20 refuses --cpu-prof in NODE_OPTIONS; this preload does the same through the inspector:
//   SEARCH_NODE_ARGS="--require ./bench/search/cpu-prof.cjs" (CPU_PROF_DIR, default /tmp) writes
//   <dir>/<pid>.cpuprofile when the process exits. A same-thread inspector session answers
//   synchronously, so the profile is written from the 'exit' handler.
const inspector = require('node:inspector');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.CPU_PROF_DIR || '/tmp';
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 200 });
session.post('Profiler.start');
process.on('exit', () => {
  session.post('Profiler.stop', (err, res) => {
    if (err) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(res.profile));
  });
});
