package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LongMapTest {
    @Test
    void behavesAsAHashMapUnderRandomPutsRemovesAndGrowth() {
        Random rnd = new Random(12);
        LongMap<Long> map = new LongMap<>();
        Map<Long, Long> ref = new HashMap<>();
        for (int i = 0; i < 200_000; i++) {
            // Few distinct keys, some colliding in the low bits: long probe chains, removals in their middle.
            long key = (rnd.nextInt(3000) * 1024L) ^ (rnd.nextBoolean() ? Long.MIN_VALUE : 0);
            switch (rnd.nextInt(4)) {
                case 0 -> {
                    map.put(key, (long) i);
                    ref.put(key, (long) i);
                }
                case 1 -> {
                    map.remove(key);
                    ref.remove(key);
                }
                case 2 -> assertThat(map.putIfAbsent(key, (long) i)).isEqualTo(ref.putIfAbsent(key, (long) i) == null);
                default -> {
                    assertThat(map.get(key)).isEqualTo(ref.get(key));
                    assertThat(map.containsKey(key)).isEqualTo(ref.containsKey(key));
                }
            }
            assertThat(map.size()).isEqualTo(ref.size());
        }
        Set<Long> keys = new HashSet<>();
        map.forEachKey(keys::add);
        assertThat(keys).isEqualTo(ref.keySet());
        for (Map.Entry<Long, Long> e : ref.entrySet()) {
            assertThat(map.get(e.getKey())).isEqualTo(e.getValue());
        }
    }
}
