// The AWS SDK for JavaScript v3 against the endpoint: send, receive with
// attributes, delete. Usage: node sqs_v3.cjs <node_modules dir> <endpoint> <queue url>
const path = require("path");
const sdk = require(path.join(process.argv[2], "@aws-sdk/client-sqs"));

async function main() {
  const [endpoint, queueUrl] = process.argv.slice(3);
  const client = new sdk.SQSClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "AKID", secretAccessKey: "secret" },
  });
  const sent = await client.send(new sdk.SendMessageCommand({
    QueueUrl: queueUrl,
    MessageBody: "from node",
    MessageAttributes: { kind: { DataType: "String", StringValue: "js" } },
  }));
  const got = await client.send(new sdk.ReceiveMessageCommand({
    QueueUrl: queueUrl,
    MessageAttributeNames: ["All"],
    MessageSystemAttributeNames: ["All"],
    WaitTimeSeconds: 1,
  }));
  const m = got.Messages[0];
  await client.send(new sdk.DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
  let error = null;
  try {
    await client.send(new sdk.GetQueueUrlCommand({ QueueName: "missing" }));
  } catch (e) {
    error = e.name;
  }
  console.log(JSON.stringify({
    sentId: sent.MessageId, id: m.MessageId, body: m.Body,
    kind: m.MessageAttributes.kind.StringValue, count: m.Attributes.ApproximateReceiveCount, error,
  }));
}
main().catch((e) => { console.error(e); process.exit(1); });
