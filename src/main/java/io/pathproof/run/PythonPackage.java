package io.pathproof.run;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.stream.Stream;

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
      withRoot(root -> {
        try (Stream<Path> files = Files.list(root)) {
          for (Path f : files.toList()) {
            String name = f.getFileName().toString();
            if (name.endsWith(".py") || name.endsWith(".json")) {
              Files.copy(f, pkg.resolve(name), StandardCopyOption.REPLACE_EXISTING);
            }
          }
        }
      });
      Files.copy(pkg.resolve("_sitecustomize.py"), target.resolve("sitecustomize.py"), StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw PathproofException.badInput("run: cannot write the instrumentation into " + target + ": " + e.getMessage());
    }
    return target;
  }

  private interface RootAction {
    void apply(Path root) throws IOException;
  }

  /** The package's folder in the jar (a zip file system) or in the classes directory (tests, the IDE). */
  private static void withRoot(RootAction action) throws IOException {
    URL url = PythonPackage.class.getResource(ROOT + "__init__.py");
    if (url == null) {
      throw new PathproofException(ExitCode.INTERNAL, "the Python package is missing from the jar");
    }
    URI uri;
    try {
      uri = url.toURI();
    } catch (URISyntaxException e) {
      throw new PathproofException(ExitCode.INTERNAL, "the Python package's location is not a URI: " + url);
    }
    if (!uri.getScheme().equals("jar")) {
      action.apply(Path.of(uri).getParent());
      return;
    }
    FileSystem fs;
    boolean mine = false;
    try {
      fs = FileSystems.newFileSystem(uri, Map.of());
      mine = true;
    } catch (FileSystemAlreadyExistsException e) {
      fs = FileSystems.getFileSystem(uri);
    }
    try {
      action.apply(fs.provider().getPath(uri).getParent());
    } finally {
      if (mine) {
        fs.close();
      }
    }
  }
}
