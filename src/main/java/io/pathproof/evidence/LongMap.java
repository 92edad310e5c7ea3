package io.pathproof.evidence;

/**
 * A map from long keys (process, thread and device keys, comm pointers) to values, open addressing, no boxing: the
 * NCCL log reader asks it once or more per line, and {@code HashMap<Long, …>} boxed a key each time (7 % of the time
 * on init-heavy logs). Keys are visited in no defined order: where the order of entries matters a HashMap is kept.
 */
final class LongMap<V> {
    private long[] keys = new long[16];
    private Object[] values = new Object[16];
    private boolean[] used = new boolean[16];
    private int size;

    @SuppressWarnings("unchecked")
    V get(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); used[i]; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return (V) values[i];
            }
        }
        return null;
    }

    boolean containsKey(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); used[i]; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return true;
            }
        }
        return false;
    }

    /** Puts {@code value} unless {@code key} is there; true when it was put. */
    boolean putIfAbsent(long key, V value) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); used[i]; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return false;
            }
        }
        put(key, value);
        return true;
    }

    void forEachKey(java.util.function.LongConsumer action) {
        for (int i = 0; i < keys.length; i++) {
            if (used[i]) {
                action.accept(keys[i]);
            }
        }
    }

    void put(long key, V value) {
        if (value == null) {
            throw new IllegalArgumentException("null value");
        }
        int mask = keys.length - 1;
        int i = slot(key, mask);
        for (; used[i]; i = (i + 1) & mask) {
            if (keys[i] == key) {
                values[i] = value;
                return;
            }
        }
        used[i] = true;
        keys[i] = key;
        values[i] = value;
        if (++size * 2 > keys.length) {
            grow();
        }
    }

    /** Removes {@code key}; shifts the entries after it back so that no probe chain is cut (no tombstones). */
    void remove(long key) {
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (used[i] && keys[i] != key) {
            i = (i + 1) & mask;
        }
        if (!used[i]) {
            return;
        }
        used[i] = false;
        values[i] = null;
        size--;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            if (!used[j]) {
                return;
            }
            int home = slot(keys[j], mask);
            // Move j into the hole at i when its home slot is not in (i, j] cyclically.
            boolean between = i <= j ? i < home && home <= j : i < home || home <= j;
            if (!between) {
                keys[i] = keys[j];
                values[i] = values[j];
                used[i] = true;
                used[j] = false;
                values[j] = null;
                i = j;
            }
        }
    }

    int size() {
        return size;
    }

    private void grow() {
        long[] k = keys;
        Object[] v = values;
        boolean[] u = used;
        keys = new long[k.length * 2];
        values = new Object[k.length * 2];
        used = new boolean[k.length * 2];
        size = 0;
        for (int i = 0; i < k.length; i++) {
            if (u[i]) {
                @SuppressWarnings("unchecked")
                V value = (V) v[i];
                put(k[i], value);
            }
        }
    }

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }
}
