// The calls bbc/sqs-consumer's integration suite (test/features, written for
// ElasticMQ) makes, in its order, with the AWS SDK for JavaScript v3: its
// init script creates the queue, then ten scenarios in feature-file order, each
// followed by the After hook that purges the queue (cucumber runs every After
// hook after every scenario); six of them purge in their Given step too.
// Like cucumber, a failed step skips the rest of its scenario, not the hook.
// Usage: node elasticmq_suite.cjs <node_modules dir> <endpoint>
// Prints {url, scenarios: [{name, ok, errors}]}.
const path = require("path");
const sdk = require(path.join(process.argv[2], "@aws-sdk/client-sqs"));

const endpoint = process.argv[3];
// test/features/utils/sqs.js and test/scripts/initIntTests.sh
const sqs = new sdk.SQSClient({
  region: "eu-west-1",
  endpoint,
  credentials: { accessKeyId: "key", secretAccessKey: "secret" },
});

function check(ok, what) {
  if (!ok) {
    const error = new Error(what);
    error.name = "AssertionError";
    throw error;
  }
}

async function main() {
  await sqs.send(new sdk.ListQueuesCommand({}));
  await sqs.send(new sdk.CreateQueueCommand({
    QueueName: "sqs-consumer-data",
    Attributes: { VisibilityTimeout: "30" },
  }));
  const { QueueUrl: url } = await sqs.send(
    new sdk.GetQueueUrlCommand({ QueueName: "sqs-consumer-data" }),
  );
  const QueueUrl = url;

  const purge = () => sqs.send(new sdk.PurgeQueueCommand({ QueueUrl }));
  // sqs-producer: send() is SendMessageBatch, queueSize() GetQueueAttributes
  const send = (bodies) => sqs.send(new sdk.SendMessageBatchCommand({
    QueueUrl,
    Entries: bodies.map((body, i) => ({ Id: `${i}`, MessageBody: body })),
  }));
  const size = async () => Number((await sqs.send(new sdk.GetQueueAttributesCommand({
    QueueUrl,
    AttributeNames: ["ApproximateNumberOfMessages"],
  }))).Attributes.ApproximateNumberOfMessages);
  // sqs-consumer: one ReceiveMessage per poll, then DeleteMessage (handleMessage)
  // or DeleteMessageBatch (handleMessageBatch) for what was handled
  const receive = async (max) => (await sqs.send(new sdk.ReceiveMessageCommand({
    QueueUrl,
    MaxNumberOfMessages: max,
    WaitTimeSeconds: 1,
    VisibilityTimeout: 30,
    AttributeNames: [],
    MessageAttributeNames: [],
    MessageSystemAttributeNames: [],
  }))).Messages || [];
  const consumeOneByOne = async (count) => {
    for (let i = 0; i < count; i++) {
      const [m] = await receive(1);
      check(m !== undefined, `message ${i} received`);
      await sqs.send(new sdk.DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
      check((await size()) === count - i - 1, `queue size ${count - i - 1}`);
    }
  };
  const consumeBatches = async (count, batchSize) => {
    let left = count;
    while (left > 0) {
      const messages = await receive(batchSize);
      check(messages.length === Math.min(left, batchSize), `a batch of ${Math.min(left, batchSize)}`);
      await sqs.send(new sdk.DeleteMessageBatchCommand({
        QueueUrl,
        Entries: messages.map((m, i) => ({ Id: `${i}`, ReceiptHandle: m.ReceiptHandle })),
      }));
      left -= messages.length;
      check((await size()) === left, `queue size ${left}`);
    }
  };
  const purgedThenSent = async (bodies) => {
    await purge();
    await send(bodies);
    check((await size()) === bodies.length, `queue size ${bodies.length}`);
  };

  const scenarios = [
    // events.feature
    ["Error event without a message", async () => {}],
    ["Error event with a message", async () => {
      await send(["test-message-for-events"]);
      check((await receive(1)).length === 1, "one message"); // its delete fails (a mock)
    }],
    ["Message events are emitted with metadata", async () => {
      await send(["test-message-for-events"]);
      const [m] = await receive(1);
      check(m !== undefined, "one message");
      await sqs.send(new sdk.DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
    }],
    ["Empty queue event is emitted with metadata", async () => {
      await purge();
      check((await receive(1)).length === 0, "an empty receive");
    }],
    ["Started and stopped events are emitted with metadata", async () => {}],
    // gracefulShutdown.feature
    ["Several messages in flight", async () => {
      await purge();
      check((await size()) === 0, "queue empty after purge");
      await send(["msg1", "msg2", "msg3"]);
      check((await size()) === 3, "queue size 3");
      const messages = await receive(10);
      check(messages.length === 3, "three messages in flight");
      for (const m of messages) {
        await sqs.send(new sdk.DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
      }
      check((await size()) === 0, "queue empty after processing");
    }],
    // handleMessage.feature
    ["A message is consumed from SQS", async () => {
      await purgedThenSent(["msg1"]);
      await consumeOneByOne(1);
    }],
    ["Multiple messages are consumed from SQS", async () => {
      await purgedThenSent(["msg2", "msg3", "msg4"]);
      await consumeOneByOne(3);
    }],
    // handleMessageBatch.feature
    ["A message batch is consumed from SQS", async () => {
      await purgedThenSent(["msg1", "msg2", "msg3", "msg4"]);
      await consumeBatches(4, 5);
    }],
    ["Multiple message batches are consumed from SQS", async () => {
      await purgedThenSent(["msg1", "msg2", "msg3", "msg4", "msg5", "msg6"]);
      await consumeBatches(6, 5);
    }],
  ];

  const results = [];
  for (const [name, steps] of scenarios) {
    const errors = [];
    try {
      await steps();
    } catch (e) {
      errors.push(e.name);
    }
    try {
      await purge(); // gracefulShutdown.js's After hook
    } catch (e) {
      errors.push(e.name);
    }
    results.push({ name, ok: errors.length === 0, errors });
  }
  console.log(JSON.stringify({ url, scenarios: results }));
}
main().catch((e) => { console.error(e); process.exit(1); });
