"""A complete jetsched worker in Python (nats-py 2.x), written from
docs/workers.md alone: a durable pull consumer on sched.fire.<workflow>.>, at
most MAX_WORKERS fires at once (fetched only when they can start),
in-progress pings, redelivery with backoff, a dead letter after the last
delivery, completion reports on sched.done.<workflow>.<schedule id>, and
cancel requests (overlap cancel_other) on sched.cancel.<workflow>.>.

    pip install 'nats-py>=2.7'
    WORKFLOW=demo-heartbeat NATS_URL=nats://127.0.0.1:4222 python worker.py

Environment: NATS_URL, WORKFLOW, NAME (consumer "<NAME>-fire-<WORKFLOW>"),
MAX_WORKERS, WORK_SECONDS (each fire's simulated work), INBOX_PREFIX (with
the least-privilege accounts: _INBOX_<user>), NATS_USER / NATS_PASSWORD.

Not run by the project's tests: the machines that build jetsched cannot
install nats-py (see docs/workers.md).
"""

import asyncio
import json
import os
import signal
from datetime import datetime

import nats
from nats.errors import TimeoutError as FetchTimeout
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

WORKFLOW = os.environ.get("WORKFLOW", "demo-heartbeat")
NAME = os.environ.get("NAME", "py-worker")
MAX_WORKERS = int(os.environ.get("MAX_WORKERS", "4"))
WORK_SECONDS = float(os.environ.get("WORK_SECONDS", "0"))
ACK_WAIT = 30.0  # seconds
MAX_DELIVER = 5
BACKOFF = [1, 5, 30, 120]  # seconds, by delivery
DURABLE = f"{NAME}-fire-{WORKFLOW}"

running: dict[str, asyncio.Task] = {}  # slot id -> the task handling it


async def handle(payload) -> None:
    """The work of one fire. It must be idempotent per slot id."""
    if WORK_SECONDS:
        await asyncio.sleep(WORK_SECONDS)


async def main() -> None:
    nc = await nats.connect(
        os.environ.get("NATS_URL", "nats://127.0.0.1:4222"),
        inbox_prefix=os.environ.get("INBOX_PREFIX", "_INBOX"),
        user=os.environ.get("NATS_USER"),
        password=os.environ.get("NATS_PASSWORD"),
    )
    js = nc.jetstream()
    # A name and one filter subject: nats-py creates it on
    # $JS.API.CONSUMER.CREATE.SCHED_FIRES.<durable>.sched.fire.<workflow>.>,
    # the form the least-privilege worker accounts allow.
    await js.add_consumer(
        "SCHED_FIRES",
        ConsumerConfig(
            name=DURABLE,
            durable_name=DURABLE,
            filter_subject=f"sched.fire.{WORKFLOW}.>",  # every schedule of the workflow
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=ACK_WAIT,
            max_deliver=MAX_DELIVER,
            deliver_policy=DeliverPolicy.NEW,
        ),
    )
    sub = await js.pull_subscribe_bind(durable=DURABLE, stream="SCHED_FIRES")

    async def on_cancel(msg) -> None:
        # {"schedule", "slot_id", "by", "at"}: every instance gets each one;
        # the one running the slot cancels it.
        req = json.loads(msg.data)
        task = running.get(req["slot_id"])
        if task is not None:
            task.cancel(f"cancelled by the scheduler: slot {req['by']} replaces it")

    await nc.subscribe(f"sched.cancel.{WORKFLOW}.>", cb=on_cancel)

    async def report(schedule: str, slot: str, outcome: str, error: str = "") -> None:
        body = {"slot_id": slot, "outcome": outcome, "worker": NAME}
        if error:
            body["error"] = error
        await nc.publish(f"sched.done.{WORKFLOW}.{schedule}", json.dumps(body).encode())

    async def dead_letter(msg, schedule: str, slot: str, n: int, error: str) -> None:
        hdrs = {k: v for k, v in (msg.headers or {}).items() if k != "Nats-Msg-Id"}
        hdrs.update({"Sched-Original-Subject": msg.subject, "Sched-Original-Id": slot,
                     "Sched-Deliveries": str(n), "Sched-Error": error})
        await nc.publish(f"sched.event.dead_letter.{WORKFLOW}.{schedule}", msg.data, headers=hdrs)

    async def keep_alive(msg) -> None:
        while True:  # in-progress: keeps AckWait from running out
            await asyncio.sleep(ACK_WAIT / 3)
            await msg.in_progress()

    async def run(msg) -> None:
        hdrs = msg.headers or {}
        schedule, slot = hdrs.get("Sched-Schedule-Id"), hdrs.get("Nats-Msg-Id")
        if not schedule or not slot or "Sched-Scheduled-At" not in hdrs:
            await msg.term()
            return
        n = msg.metadata.num_delivered
        scheduled = datetime.fromisoformat(hdrs["Sched-Scheduled-At"])
        lateness = datetime.now(scheduled.tzinfo) - scheduled
        print(f"fire {slot} delivery {n} lateness {lateness.total_seconds() * 1000:.1f}ms input {msg.data!r}")
        work = asyncio.create_task(handle(json.loads(msg.data) if msg.data else None))
        running[slot] = work
        pings = asyncio.create_task(keep_alive(msg))
        try:
            await work
            await msg.ack()
            await report(schedule, slot, "completed")
        except asyncio.CancelledError as e:
            if not work.cancelled():
                raise  # the worker itself stops: do not settle, it is redelivered
            reason = str(e) or "cancelled by the scheduler"
            await msg.term()  # a cancel request: never redelivered
            await report(schedule, slot, "cancelled", reason)
        except Exception as e:  # noqa: BLE001 - any failure of the handler
            if n >= MAX_DELIVER:  # the last delivery: keep a copy, give up
                await dead_letter(msg, schedule, slot, n, str(e))
                await msg.term()
                await report(schedule, slot, "failed", f"dead-lettered after {n} deliveries: {e}")
            else:
                await msg.nak(delay=BACKOFF[min(n, len(BACKOFF)) - 1])
        finally:
            pings.cancel()
            running.pop(slot, None)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    in_flight: set[asyncio.Task] = set()
    print(f"consuming sched.fire.{WORKFLOW}.> as {DURABLE}, {MAX_WORKERS} at once")
    # The fetch loop: ask for no more messages than there are free places,
    # so that none waits in a buffer while AckWait runs.
    while not stop.is_set():
        free = MAX_WORKERS - len(in_flight)
        if free == 0:
            await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            continue
        try:
            msgs = await sub.fetch(batch=free, timeout=5)
        except FetchTimeout:
            continue
        for msg in msgs:
            task = asyncio.create_task(run(msg))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
    if in_flight:
        await asyncio.wait(in_flight)  # let the running fires finish
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main())
