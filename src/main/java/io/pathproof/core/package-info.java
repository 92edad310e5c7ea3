/** What every room shares: the exit codes, the error that carries one, and the canonical JSON configuration. */
package io.pathproof.core;
