import Dispatch
import Foundation
import Logging
import Synchronization

/// Where photosd's log lines go: standard error, each line whole (one `write(2)` never splits a
/// line, so lines from several threads never interleave).
///
/// Lines below `notice` (a request's line, at `info`) are kept in a buffer and written together
/// at most `flushInterval` after the first of them (`log.flushMilliseconds`, 10 by default), or
/// at once when the buffer passes 32 KiB; a line at `notice` or above is written at once, after
/// the lines before it. One write per line woke whoever reads the pipe (journald) for every
/// request: batched, the reader's CPU per action in the stack journey fell from 27 to 19 µs and
/// the actions rose 3.7 % (docs/benchmarks.md, "Other figures"). What is kept is written at a stop (`flush()`,
/// photosd's last step) and at `exit`; a crash loses at most that interval of request lines.
/// Zero writes every line at once.
public final class LogLineSink: Sendable {
    /// The lines not yet written, and whether a flush is scheduled.
    private let pending = Mutex<(bytes: [UInt8], scheduled: Bool)>(([], false))
    private let flushMilliseconds: Atomic<Int>
    private let write: @Sendable ([UInt8]) -> Void

    /// Lines are kept while this many bytes or fewer wait.
    static let bufferBytes = 32 * 1_024

    /// A sink handing what it writes to `write`, keeping lines below `notice` at most
    /// `flushMilliseconds`.
    public init(flushMilliseconds: Int, write: @escaping @Sendable ([UInt8]) -> Void) {
        self.flushMilliseconds = Atomic(flushMilliseconds)
        self.write = write
    }

    /// Standard error: photosd's lines, whichever handler formats them. Written out at `exit`.
    public static let standard: LogLineSink = {
        let sink = LogLineSink(flushMilliseconds: 10, write: LogLineSink.standardError)
        atexit { LogLineSink.standard.flush() }
        return sink
    }()

    /// Sets how long lines below `notice` may wait (`log.flushMilliseconds`; 0: none).
    public func setFlushMilliseconds(_ milliseconds: Int) {
        flush()
        flushMilliseconds.store(max(0, milliseconds), ordering: .relaxed)
    }

    /// Writes `line` (with its newline) now or with the next flush, as its `level` says.
    public func take(_ line: [UInt8], level: Logger.Level) {
        let milliseconds = flushMilliseconds.load(ordering: .relaxed)
        guard milliseconds > 0, level < .notice else {
            pending.withLock { state in
                state.bytes += line
                writeOut(&state.bytes)
            }
            return
        }
        let schedule = pending.withLock { state -> Bool in
            state.bytes += line
            if state.bytes.count > Self.bufferBytes {
                writeOut(&state.bytes)
                return false
            }
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if schedule {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in flush() }
        }
    }

    /// Writes every line kept.
    public func flush() {
        pending.withLock { state in
            state.scheduled = false
            if !state.bytes.isEmpty { writeOut(&state.bytes) }
        }
    }

    /// Writes `bytes` and empties them (called with the lock held, so writes keep their order).
    private func writeOut(_ bytes: inout [UInt8]) {
        write(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` to standard error in one call (looping only on a short write).
    public static let standardError: @Sendable ([UInt8]) -> Void = { bytes in
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(2, base + offset, buffer.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
