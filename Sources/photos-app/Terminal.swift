#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal photos-app runs in: keys one at a time (no echo, no line buffering) while it
/// runs, and lines typed with or without echo when it asks for them. Restores the terminal as
/// it found it on every way out: a return, an error, and Ctrl-C, a hang-up or `kill` (their
/// handler restores it, says how to resume, and exits). A resize wakes `key()` with
/// `Terminal.redraw` (through a pipe the SIGWINCH handler writes to), so that the app draws
/// again at the new size; so does `wakeUp()`, when the session changed elsewhere.
final class Terminal {
    private let isTerminal: Bool

    /// What `key()` returns when the app should draw again: the window was resized, or
    /// `wakeUp()` was called (the session changed on another device).
    static let redraw: UInt8 = 0

    /// Makes a `key()` that waits return `Terminal.redraw`: callable from any thread.
    static func wakeUp() {
        var byte: UInt8 = 1
        _ = systemWrite(wakeWriteEnd, &byte, 1)
    }

    init() {
        isTerminal = isatty(STDIN_FILENO) == 1
        var ends: [Int32] = [0, 0]
        if wakeReadEnd < 0, pipe(&ends) == 0 {
            wakeReadEnd = ends[0]
            wakeWriteEnd = ends[1]
            _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        }
        guard isTerminal else { return }
        tcgetattr(STDIN_FILENO, &savedTerminal)
        var raw = savedTerminal
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        terminalSaved = 1
        Self.installHandlers()
    }

    /// Puts the terminal back as it was.
    func restore() {
        guard isTerminal else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
    }

    /// The line printed when a signal ends the app (how to resume its session).
    func setFarewell(_ text: String) {
        farewell = Array(text.utf8)
    }

    /// The window's size (rows, columns); 24×80 when it cannot tell.
    var size: (rows: Int, columns: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_row > 0, window.ws_col > 0 else { return (24, 80) }
        return (Int(window.ws_row), Int(window.ws_col))
    }

    private static func installHandlers() {
        var ending = sigaction()
        ending.__sigaction_handler.sa_handler = endOnSignal
        sigemptyset(&ending.sa_mask)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaction(signal, &ending, nil) }
        // A resize writes a byte to the pipe that `key()` polls beside standard input: the signal
        // may be handled on any of the process's threads, not the one waiting for a key.
        var resize = sigaction()
        resize.__sigaction_handler.sa_handler = noteResize
        sigemptyset(&resize.sa_mask)
        sigaction(SIGWINCH, &resize, nil)
    }

    /// Writes `text` as it is.
    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Clears the screen and writes `text`.
    func show(_ text: String) { write("\u{1B}[2J\u{1B}[H" + text) }

    /// The next key pressed (one byte; an escape sequence's first byte), `Terminal.redraw`
    /// when the window was resized or `wakeUp()` called meanwhile, nil at end of input.
    func key() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            var waits = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeReadEnd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&waits, wakeReadEnd >= 0 ? 2 : 1, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if wakeReadEnd >= 0, waits[1].revents & Int16(POLLIN) != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                _ = read(wakeReadEnd, &drained, drained.count)
                return Self.redraw
            }
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count == 0 { return nil }
            if errno != EINTR { return nil }
        }
    }

    /// A line typed after `prompt`, echoed as typed unless `secret` (a password: nothing shown).
    /// Backspace edits; nil at end of input or on Escape.
    func line(_ prompt: String, secret: Bool = false) -> String? {
        write(prompt)
        var bytes: [UInt8] = []
        while let byte = key() {
            switch byte {
            case 10, 13:
                write("\n")
                return String(decoding: bytes, as: UTF8.self)
            case 27:
                write("\n")
                return nil
            case Terminal.redraw:
                continue
            case 8, 127:
                if !bytes.isEmpty {
                    bytes.removeLast()
                    if !secret { write("\u{8} \u{8}") }
                }
            default:
                bytes.append(byte)
                if !secret { write(String(decoding: [byte], as: UTF8.self)) }
            }
        }
        return nil
    }
}

/// The C library's `write`, by a name the method above does not hide.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}

// What the signal handlers use: set before they are installed, read only by them, and only with
// async-signal-safe calls (tcsetattr, write, _exit). `nonisolated(unsafe)`: a signal handler
// cannot take a lock; each value is written once before the handlers exist (or, the farewell,
// by the one thread that draws, between keys), and a torn read can only garble that last line.
nonisolated(unsafe) private var savedTerminal = termios()
nonisolated(unsafe) private var terminalSaved: sig_atomic_t = 0
nonisolated(unsafe) private var farewell: [UInt8] = []
nonisolated(unsafe) private var wakeReadEnd: Int32 = -1
nonisolated(unsafe) private var wakeWriteEnd: Int32 = -1

/// Ctrl-C, a hang-up, `kill`: the terminal as it was, the line that says how to resume, exit.
private func endOnSignal(_ signal: Int32) {
    if terminalSaved != 0 { tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal) }
    farewell.withUnsafeBufferPointer { bytes in
        if let base = bytes.baseAddress { _ = systemWrite(STDOUT_FILENO, base, bytes.count) }
    }
    _exit(128 + signal)
}

private func noteResize(_ signal: Int32) {
    Terminal.wakeUp()
}
