// bbc/sqs-consumer (npm `sqs-consumer`) as its README shows it, plus the one
// line sqsqueue check needs: the effect, sent before the handler returns (and
// so before sqs-consumer deletes the message).
//
//   npm install            # sqs-consumer and @aws-sdk/client-sqs
//   sqsqueue check --messages 60 --faults kill=3 -- node consumer.mjs
//
// The endpoint, region, keys and queue URLs come from the environment that
// sqsqueue check sets (AWS_ENDPOINT_URL_SQS, SQSQUEUE_QUEUE_URL, ...).
// BATCH_SIZE (default 10) and WORK_MS (default 5, the handler's work) tune it.
// HANDLE_BATCH=1 uses handleMessageBatch, handling a batch's messages one after
// another (what the README asks of FIFO consumers) instead of handleMessage,
// which sqs-consumer runs concurrently for the messages of a batch.
import { Consumer } from "sqs-consumer";
import { SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";

const sqs = new SQSClient({});
const effects = process.env.SQSQUEUE_EFFECTS_URL;
const work = Number(process.env.WORK_MS ?? "5");

async function handle(message) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * work)); // the work
  await sqs.send(new SendMessageCommand({ QueueUrl: effects, MessageBody: message.Body })); // the effect
  return message;
}

const handlers = process.env.HANDLE_BATCH
  ? {
      handleMessageBatch: async (messages) => {
        for (const message of messages) await handle(message);
        return messages;
      },
      suppressFifoWarning: true,
    }
  : { handleMessage: handle };

const app = Consumer.create({
  queueUrl: process.env.SQSQUEUE_QUEUE_URL,
  sqs,
  batchSize: Number(process.env.BATCH_SIZE ?? "10"),
  waitTimeSeconds: 1,
  ...handlers,
});

app.on("error", (err) => console.error("error:", err.name, err.message));
app.on("processing_error", (err) => console.error("processing_error:", err.message));
process.on("SIGTERM", () => { app.stop(); process.exit(0); });
app.start();
