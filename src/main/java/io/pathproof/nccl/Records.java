package io.pathproof.nccl;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.function.Function;

/**
 * Records built component by component: the version tables from a file's keys, and copies of the many-component
 * predictions with one component replaced, without listing every component again at each place.
 */
final class Records {
    private Records() {}

    /** A record of {@code type} whose every component is {@code value.apply(component)}. */
    static <R extends Record> R build(Class<R> type, Function<RecordComponent, Object> value) {
        RecordComponent[] components = type.getRecordComponents();
        Class<?>[] types = new Class<?>[components.length];
        Object[] args = new Object[components.length];
        for (int i = 0; i < components.length; i++) {
            types[i] = components[i].getType();
            args[i] = value.apply(components[i]);
        }
        try {
            return type.getDeclaredConstructor(types).newInstance(args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(type.getSimpleName() + ": no canonical constructor to call", e);
        }
    }

    /** A copy of {@code record} with the component named {@code name} set to {@code value}. */
    @SuppressWarnings("unchecked")
    static <R extends Record> R with(R record, String name, Object value) {
        Class<R> type = (Class<R>) record.getClass();
        boolean[] found = {false};
        R copy = build(type, c -> {
            if (c.getName().equals(name)) {
                found[0] = true;
                return value;
            }
            return get(record, c);
        });
        if (!found[0]) {
            throw new IllegalArgumentException(type.getSimpleName() + " has no component " + name);
        }
        return copy;
    }

    private static Object get(Record record, RecordComponent c) {
        try {
            return c.getAccessor().invoke(record);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    c.getName() + " of " + record.getClass().getSimpleName(), e);
        }
    }
}
