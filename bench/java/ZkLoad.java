// ZkLoad drives a ZooKeeper ensemble with ZooKeeper's own Java client, asynchronously, so a fixed number of
// requests is always in flight: SET is setData on one of `keys` znodes; GET is sync (so the read is as
// fresh as the leader's state, ZooKeeper's consistent read) followed by getData of the same znode.
// Started with Java's single-file source launcher against Debian's zookeeper.jar (bench/src/peers/zookeeper.ts).
//
// Usage: java -cp zookeeper.jar:CLASSES ZkLoad CONNECT DURATION_MS VALUE_BYTES KEYS PHASE...
// where a PHASE is set:IN_FLIGHT or get:IN_FLIGHT, run one after another on one connection (one JVM start).
// Prints one JSON line per phase: {"op":"set","inFlight":50,"ops":N,"seconds":S,"throughputPerSec":R,"errors":E}.
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public class ZkLoad {
  public static void main(String[] args) throws Exception {
    String connect = args[0];
    long durationMs = Long.parseLong(args[1]);
    byte[] value = new byte[Integer.parseInt(args[2])];
    int keys = Integer.parseInt(args[3]);
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(connect, 30000, event -> {
      if (event.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    });
    connected.await();
    try {
      zk.create("/reef-bench", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    } catch (KeeperException.NodeExistsException e) {
      // made by an earlier run
    }
    for (int i = 0; i < keys; i++) {
      try {
        zk.create("/reef-bench/k" + i, value, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
      } catch (KeeperException.NodeExistsException e) {
        // made by an earlier run
      }
    }
    for (int phase = 4; phase < args.length; phase++) {
      String[] parts = args[phase].split(":");
      run(zk, parts[0].equals("get"), Integer.parseInt(parts[1]), durationMs, value, keys);
    }
    zk.close();
  }

  static void run(ZooKeeper zk, boolean get, int inFlight, long durationMs, byte[] value, int keys)
      throws InterruptedException {
    AtomicLong ops = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    long start = System.nanoTime();
    long end = start + durationMs * 1_000_000L;
    CountDownLatch done = new CountDownLatch(inFlight);
    java.util.Random random = new java.util.Random(1);
    for (int w = 0; w < inFlight; w++) {
      new Object() {
        void next() {
          if (System.nanoTime() >= end) {
            done.countDown();
            return;
          }
          String path = "/reef-bench/k" + (Math.abs(random.nextInt()) % keys);
          AsyncCallback.StatCallback onSet = (rc, p, ctx, stat) -> finish(rc);
          AsyncCallback.DataCallback onGet = (rc, p, ctx, data, stat) -> finish(rc);
          if (get) {
            zk.sync(path, (rc, p, ctx) -> {
              if (rc != 0) finish(rc);
              else zk.getData(path, false, onGet, null);
            }, null);
          } else {
            zk.setData(path, value, -1, onSet, null);
          }
        }

        void finish(int rc) {
          if (rc == 0) ops.incrementAndGet();
          else errors.incrementAndGet();
          next();
        }
      }.next();
    }
    done.await();
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.println("{\"op\":\"" + (get ? "get" : "set") + "\",\"inFlight\":" + inFlight + ",\"ops\":"
        + ops.get() + ",\"seconds\":" + seconds + ",\"throughputPerSec\":" + (ops.get() / seconds)
        + ",\"errors\":" + errors.get() + "}");
  }
}
