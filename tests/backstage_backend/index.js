// A Backstage backend with the catalog plugin only (and the scaffolder's Template kind), for
// kgbuild's tests: `node index.js --config app-config.yaml` (the test writes the config: a
// loopback port, a SQLite database, a static token, the catalog files as file locations).
const { createBackend } = require('@backstage/backend-defaults');

const backend = createBackend();
backend.add(require('@backstage/plugin-catalog-backend'));
backend.add(require('@backstage/plugin-catalog-backend-module-scaffolder-entity-model'));
backend.start();
