#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal photos-app runs in: keys one at a time (no echo, no line buffering) while it
/// runs, and lines typed with or without echo when it asks for them. Restores the terminal as
/// it found it.
final class Terminal {
    private var original = termios()
    private let isTerminal: Bool

    init() {
        isTerminal = isatty(STDIN_FILENO) == 1
        guard isTerminal else { return }
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    /// Puts the terminal back as it was.
    func restore() {
        guard isTerminal else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
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

    /// The next key pressed (one byte; an escape sequence's first byte), nil at end of input.
    func key() -> UInt8? {
        var byte: UInt8 = 0
        while true {
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
