// Starts fauxqs (SQS/SNS/S3 emulator) bound to 127.0.0.1 only, with two
// additions to its S3 that the movies need (fauxqs 1.9 has neither):
//
//   - S3 event notifications to SQS: PutBucketNotificationConfiguration
//     (PUT /<bucket>?notification, QueueConfiguration with Queue ARN, Event
//     patterns and prefix/suffix filter rules) is stored, and every object
//     created (PutObject, CopyObject, CompleteMultipartUpload) or deleted
//     in that bucket enqueues an S3 event message in the AWS format
//     ({"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put",
//     "s3":{"bucket":{...},"object":{"key":<URL-encoded>,"size",...}}}]})
//     on the configured queue, as S3 does. Configuring sends s3:TestEvent.
//   - Conditional writes: a PUT with If-None-Match: * onto an existing
//     object is refused with 412; object tagging requests (?tagging) are
//     accepted and ignored instead of acting on the object itself.
//   - CORS: any Origin is echoed, preflights (OPTIONS) answered, so the
//     page can PUT uploads and GET frame images from another port.
//   - Larger uploads: fauxqs parses every body through one 11 MiB limit;
//     video/* and application/octet-stream bodies get FAUXQS_S3_MAX_BYTES
//     (default 2 GiB + 1 MiB; objects live in memory).
//
// Like fauxqs, it checks no signature: a presigned URL works whatever its
// signature says (the tests check what the SDK signs separately).
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

const s3Store = new S3Store();
const app = buildApp({
  logger: { level: process.env.FAUXQS_LOG_LEVEL ?? "warn" },
  stores: { sqsStore, snsStore: new SnsStore(), s3Store },
});

// --- CORS, as the CDK stack's bucket rule: browsers PUT uploads and GET
// frame images straight from S3 (the page is on another port) ----------
app.addHook("onRequest", async (request, reply) => {
  const origin = request.headers.origin;
  if (!origin) return;
  reply.header("access-control-allow-origin", origin);
  reply.header("vary", "Origin");
  reply.header("access-control-expose-headers", "ETag");
  if (request.method === "OPTIONS") {
    reply.header("access-control-allow-methods", "GET, PUT, HEAD");
    reply.header("access-control-allow-headers", request.headers["access-control-request-headers"] ?? "content-type");
    reply.header("access-control-max-age", "3600");
    reply.status(204).send();
    return reply;
  }
});

// --- Larger S3 bodies -----------------------------------------------------
const maxBytes = Number.parseInt(process.env.FAUXQS_S3_MAX_BYTES ?? "", 10) || 2 * 1024 ** 3 + 1024 ** 2;
const raw = (_req, body, done) => done(null, body);
app.addContentTypeParser(/^video\//, { parseAs: "buffer", bodyLimit: maxBytes }, raw);
app.addContentTypeParser("application/octet-stream", { parseAs: "buffer", bodyLimit: maxBytes }, raw);

// --- S3 event notifications to SQS ----------------------------------------
const notifications = new Map(); // bucket -> [{id, queueArn, events: [pattern], prefix, suffix}]
const xmlValues = (xml, tag) => [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1].trim());
const unescapeXml = (s) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");

function parseNotificationConfiguration(xml) {
  const configs = [];
  for (const block of xmlValues(xml, "QueueConfiguration")) {
    const rules = {};
    for (const rule of xmlValues(block, "FilterRule")) {
      const name = (xmlValues(rule, "Name")[0] ?? "").toLowerCase();
      rules[name] = unescapeXml(xmlValues(rule, "Value")[0] ?? "");
    }
    configs.push({
      id: unescapeXml(xmlValues(block, "Id")[0] ?? "notification"),
      queueArn: unescapeXml(xmlValues(block, "Queue")[0] ?? ""),
      events: xmlValues(block, "Event").map(unescapeXml),
      prefix: rules.prefix ?? "",
      suffix: rules.suffix ?? "",
    });
  }
  return configs;
}

// "s3:ObjectCreated:*" matches "ObjectCreated:Put".
const eventMatches = (pattern, eventName) => {
  const p = pattern.replace(/^s3:/, "");
  return p.endsWith(":*") ? eventName.startsWith(p.slice(0, -1)) : p === eventName;
};

// S3 URL-encodes keys in events like a form (space as +).
const encodeKey = (key) => encodeURIComponent(key).replace(/%20/g, "+").replace(/%2F/g, "/");

let sequence = 0;
function notify(bucket, key, eventName, obj) {
  for (const c of notifications.get(bucket) ?? []) {
    if (!c.events.some((p) => eventMatches(p, eventName))) continue;
    if (!key.startsWith(c.prefix) || !key.endsWith(c.suffix)) continue;
    const queue = sqsStore.getQueueByArn(c.queueArn);
    if (!queue) continue; // S3 would have refused the configuration
    const object = { key: encodeKey(key), sequencer: (++sequence).toString(16).toUpperCase().padStart(16, "0") };
    if (obj) {
      object.size = obj.contentLength;
      object.eTag = obj.etag.replace(/"/g, "");
    }
    const record = {
      eventVersion: "2.1",
      eventSource: "aws:s3",
      awsRegion: "us-east-1",
      eventTime: new Date().toISOString(),
      eventName,
      userIdentity: { principalId: "local" },
      requestParameters: { sourceIPAddress: "127.0.0.1" },
      responseElements: { "x-amz-request-id": "local", "x-amz-id-2": "fauxqs" },
      s3: {
        s3SchemaVersion: "1.0",
        configurationId: c.id,
        bucket: { name: bucket, ownerIdentity: { principalId: "local" }, arn: `arn:aws:s3:::${bucket}` },
        object,
      },
    };
    queue.enqueue(SqsStore.createMessage(JSON.stringify({ Records: [record] })));
  }
}

// The store reports every object change to its spy; fauxqs's own spy is off.
s3Store.spy = {
  addMessage(msg) {
    if (msg.service !== "s3") return;
    if (msg.status === "uploaded") {
      const obj = s3Store.buckets.get(msg.bucket)?.get(msg.key);
      notify(msg.bucket, msg.key, multipartDone.has(msg.key) ? "ObjectCreated:CompleteMultipartUpload" : "ObjectCreated:Put", obj);
    } else if (msg.status === "deleted") {
      notify(msg.bucket, msg.key, "ObjectRemoved:Delete", undefined);
    }
  },
};
const multipartDone = new Set();
const originalComplete = s3Store.completeMultipartUpload.bind(s3Store);
s3Store.completeMultipartUpload = (uploadId, ...rest) => {
  const key = s3Store.multipartUploads.get(uploadId)?.key;
  if (key !== undefined) multipartDone.add(key);
  try {
    return originalComplete(uploadId, ...rest);
  } finally {
    if (key !== undefined) multipartDone.delete(key);
  }
};

// Object tagging (accepted and ignored: there is no lifecycle to apply it)
// and conditional writes (If-None-Match: * refuses to replace an object).
// Without this, DELETE /b/k?tagging would delete the object itself.
app.addHook("preHandler", async (request, reply) => {
  const q = request.query ?? {};
  if (request.routeOptions?.url !== "/:bucket/*" || (request.params["*"] ?? "") === "") return;
  const objects = s3Store.buckets.get(request.params.bucket);
  if ("tagging" in q) {
    if (request.method === "GET") {
      reply.status(200).header("content-type", "application/xml")
        .send(`<?xml version="1.0" encoding="UTF-8"?><Tagging><TagSet></TagSet></Tagging>`);
    } else {
      reply.status(request.method === "DELETE" ? 204 : 200).send();
    }
    return reply;
  }
  if (request.method === "PUT" && request.headers["if-none-match"] === "*" && objects?.has(request.params["*"]) && !("partNumber" in q)) {
    reply.status(412).header("content-type", "application/xml")
      .send(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`);
    return reply;
  }
});

app.addHook("preHandler", async (request, reply) => {
  const q = request.query ?? {};
  const url = request.routeOptions?.url;
  const bucketLevel = url === "/:bucket" || (url === "/:bucket/*" && (request.params["*"] ?? "") === "");
  if (!("notification" in q) || !bucketLevel) return;
  const bucket = request.params.bucket;
  if (!s3Store.hasBucket(bucket)) {
    reply.status(404).header("content-type", "application/xml")
      .send(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>`);
    return reply;
  }
  if (request.method === "PUT") {
    const xml = Buffer.isBuffer(request.body) ? request.body.toString("utf8") : String(request.body ?? "");
    const configs = parseNotificationConfiguration(xml);
    for (const c of configs) {
      if (!sqsStore.getQueueByArn(c.queueArn)) {
        reply.status(400).header("content-type", "application/xml")
          .send(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidArgument</Code><Message>Unable to validate the following destination configurations</Message></Error>`);
        return reply;
      }
    }
    notifications.set(bucket, configs);
    for (const c of configs) {
      const queue = sqsStore.getQueueByArn(c.queueArn);
      queue.enqueue(SqsStore.createMessage(JSON.stringify({
        Service: "Amazon S3", Event: "s3:TestEvent", Time: new Date().toISOString(), Bucket: bucket,
        RequestId: "local", HostId: "fauxqs",
      })));
    }
    reply.status(200).send();
    return reply;
  }
  if (request.method === "GET") {
    const body = (notifications.get(bucket) ?? []).map((c) => `<QueueConfiguration><Id>${c.id}</Id><Queue>${c.queueArn}</Queue>` +
      c.events.map((e) => `<Event>${e}</Event>`).join("") + `</QueueConfiguration>`).join("");
    reply.status(200).header("content-type", "application/xml")
      .send(`<?xml version="1.0" encoding="UTF-8"?><NotificationConfiguration>${body}</NotificationConfiguration>`);
    return reply;
  }
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
