// Starts fauxqs (SQS/SNS/S3 emulator) bound to 127.0.0.1 only.
//
// usage: node fauxqs-launcher.mjs <fauxqs package dir> <port>
//
// fauxqs's own startFauxqs() always listens on 0.0.0.0, so this does what it
// does with app.listen's host set to 127.0.0.1. The package's "exports" block
// hides the store modules from bare imports, so they are imported by file URL.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, portArg] = process.argv.slice(2);
const port = Number.parseInt(portArg ?? "", 10);
if (!pkgDir || !Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error("usage: node fauxqs-launcher.mjs <fauxqs package dir> <port>");
  process.exit(2);
}
const load = (rel) => import(pathToFileURL(join(pkgDir, "dist", rel)).href);

const { buildApp } = await load("app.js");
const { SqsStore } = await load("sqs/sqsStore.js");
const { SnsStore } = await load("sns/snsStore.js");
const { S3Store } = await load("s3/s3Store.js");

const sqsStore = new SqsStore();
// SqsStore defaults host to "localhost", which makes queue URLs like
// http://sqs.us-east-1.localhost:<port>/000000000000/<name>. With no host,
// a queue URL is built from the CreateQueue request's Host header, i.e. the
// endpoint the client used: http://127.0.0.1:<port>/000000000000/<name>,
// which resolves everywhere.
sqsStore.host = undefined;

const app = buildApp({
  logger: { level: process.env.FAUXQS_LOG_LEVEL ?? "warn" },
  stores: { sqsStore, snsStore: new SnsStore(), s3Store: new S3Store() },
});

try {
  const address = await app.listen({ port, host: "127.0.0.1" });
  console.log(`fauxqs-launcher: listening on ${address}`);
} catch (err) {
  console.error(`fauxqs-launcher: cannot listen on 127.0.0.1:${port}: ${err?.stack ?? err}`);
  process.exit(1);
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    app.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
