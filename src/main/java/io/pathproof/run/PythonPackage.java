package io.pathproof.run;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * pathproof's Python instrumentation ({@code python/pathproof_torch}), carried in the jar under {@value #ROOT}: copied
 * beside each wrapped run's evidence with a {@code sitecustomize.py} that turns it on in every Python process of the
 * job. Its {@code vocabulary.json} is read by {@link io.pathproof.rundir.Vocabulary}.
 */
final class PythonPackage {
    static final String ROOT = "/io/pathproof/python/pathproof_torch/";

    /** The directory, inside a run directory, put first on the job's PYTHONPATH. */
    static final String DIR = ".pathproof/python";

    private PythonPackage() {}

    /** Copies the package into {@code runDir}/{@value #DIR}/pathproof_torch and its sitecustomize beside it. */
    static Path extract(Path runDir) {
        Path target = runDir.resolve(DIR);
        Path pkg = target.resolve("pathproof_torch");
        try {
            Files.createDirectories(pkg);
            for (String name : files()) {
                try (InputStream in = PythonPackage.class.getResourceAsStream(ROOT + name)) {
                    if (in == null) {
                        throw new PathproofException(
                                ExitCode.INTERNAL, "the Python package's " + name + " is missing from the jar");
                    }
                    Files.copy(in, pkg.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Files.copy(
                    pkg.resolve("_sitecustomize.py"),
                    target.resolve("sitecustomize.py"),
                    StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw PathproofException.badInput(
                    "run: cannot write the instrumentation into " + target + ": " + e.getMessage());
        }
        return target;
    }

    /**
     * The package's file names: the entries under {@value #ROOT} of the jar this class came from (read with ZipFile,
     * which java.base has: a jlink'ed runtime may lack the zip file system), or the files of that folder in a classes
     * directory (tests, the IDE).
     */
    static List<String> files() throws IOException {
        URL url = PythonPackage.class.getResource(ROOT + "__init__.py");
        if (url == null) {
            throw new PathproofException(ExitCode.INTERNAL, "the Python package is missing from the jar");
        }
        List<String> out = new ArrayList<>();
        String prefix = ROOT.substring(1);
        try {
            if (url.getProtocol().equals("jar")) {
                String spec = url.getPath(); // file:/…/pathproof.jar!/io/pathproof/python/pathproof_torch/__init__.py
                Path jar = Path.of(new URL(spec.substring(0, spec.indexOf("!/"))).toURI());
                try (ZipFile zip = new ZipFile(jar.toFile())) {
                    zip.stream()
                            .map(ZipEntry::getName)
                            .filter(n -> n.startsWith(prefix) && n.indexOf('/', prefix.length()) < 0)
                            .map(n -> n.substring(prefix.length()))
                            .filter(PythonPackage::shipped)
                            .forEach(out::add);
                }
            } else {
                try (Stream<Path> s = Files.list(Path.of(url.toURI()).getParent())) {
                    s.map(p -> p.getFileName().toString())
                            .filter(PythonPackage::shipped)
                            .forEach(out::add);
                }
            }
        } catch (URISyntaxException e) {
            throw new PathproofException(ExitCode.INTERNAL, "the Python package's location is not a URI: " + url);
        }
        out.sort(null);
        return out;
    }

    private static boolean shipped(String name) {
        return name.endsWith(".py") || name.endsWith(".json");
    }
}
