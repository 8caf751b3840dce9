import ArgumentParser
import Navigation
import PhotosCore
import PhotosModel
import Sessions

extension PhotosAdmin {
    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List client sessions and show one: its stacks and coordinator tree.",
            subcommands: [List.self, Show.self])

        func run() async throws { throw Self.missingSubcommand() }
    }
}

extension PhotosAdmin.Sessions {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List sessions, most recently active first.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(parsing: .unconditional, help: "At most this many.") var limit = 100

        func validate() throws {
            guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 100000") }
        }

        func run() async throws {
            var sessions = try await global.withServices { try await $0.sessions.list(limit: limit + 1) }
            if sessions.count > limit {
                sessions.removeLast()
                Output.note("showing the \(limit) most recently active sessions; more with --limit \(min(limit * 10, 100_000))")
            }
            switch output.format {
            case .json: try Output.json(Page(name: "sessions", items: sessions))
            case .table:
                Output.table(["ID", "VERSION", "USER", "TOP", "UPDATED"], sessions.map {
                    [$0.id, String($0.version), $0.username ?? "-", $0.top?.rawValue ?? "-", $0.updatedAt]
                })
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draw a session's stacks and coordinator tree, now or as it was after step --at SEQ.",
            discussion: "--at rebuilds the state from the audit trail alone.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The session id.") var id: String
        @Option(parsing: .unconditional, help: "Show the state after this audit step (seq).") var at: Int?

        func validate() throws {
            if let at, at < 1 { throw ValidationError("--at must be 1 or more") }
        }

        func run() async throws {
            let (view, asOf) = try await global.withServices { context -> (SessionView, Int?) in
                guard let at else { return (try await context.sessions.session(id: id), nil) }
                let rows = try await context.sessions.events(sessionID: id, after: 0, limit: at)
                guard let last = rows.last, last.seq == at else {
                    throw PhotosError.notFound("session \(id) has no step \(at) (it has \(rows.count))")
                }
                let state = try SessionReplay.state(from: rows)
                return (SessionView(id: id, version: 0, state: state, owned: []), at)
            }
            switch output.format {
            case .json: try Output.json(text: SessionSnapshot(session: view, asOfSeq: asOf).jsonText)
            case .table: print(SessionDrawing.draw(view, asOfSeq: asOf))
            }
        }
    }
}

/// `sessions show --format json`: the session (as the API writes it), and the step it was
/// rebuilt to (with `--at`).
struct SessionSnapshot {
    let session: SessionView
    let asOfSeq: Int?

    var jsonText: String {
        var json = JSONBuilder()
        json.beginObject()
        json.field("asOfSeq", asOfSeq)
        json.key("session")
        session.write(to: &json)
        json.endObject()
        return json.text
    }
}

/// Draws a session for the terminal.
enum SessionDrawing {
    static func draw(_ view: SessionView, asOfSeq: Int?) -> String {
        var lines: [String] = []
        let when = asOfSeq.map { "as of step \($0)" } ?? "version \(view.version)"
        lines.append("session \(view.id) (\(when)), \(view.user.map { "signed in as \($0.username)" } ?? "signed out")")
        func screens(_ screens: [ScreenView]) -> String {
            screens.map { screen -> String in
                var text = screen.screen.rawValue
                if let photoId = screen.photoId { text += "(\(photoId)\(screen.purchased == true ? ", purchased" : ""))" }
                if let photos = screen.photos { text += "(\(photos.isEmpty ? "none" : photos.map { String($0.id) }.joined(separator: ", ")))" }
                return text
            }.joined(separator: " > ")
        }
        if let tabs = view.tabs {
            // The tab bar as drawn on a phone, the selected tab in brackets, then each tab's stack.
            lines.append("tab bar: " + tabs.items.map { $0.tab == tabs.selected ? "[\($0.tab.rawValue)]" : " \($0.tab.rawValue) " }.joined(separator: " | "))
            for item in tabs.items {
                lines.append("  \(item.tab == tabs.selected ? "*" : " ") \(item.tab.rawValue): " + screens(item.screens))
            }
        }
        lines.append("navigation (bottom first):")
        for stack in view.navigation {
            let label = switch stack.presentation {
            case .root: "root "
            case .modal: "modal"
            case .tab: "tab \(stack.tab?.rawValue ?? "?")"
            }
            lines.append("  \(label): " + screens(stack.screens))
        }
        if let top = view.top {
            lines.append("top: \(top.screen.rawValue) [\(top.actions.map(\.rawValue).joined(separator: ", "))]")
        }
        lines.append("coordinators:")
        lines += (view.coordinators?.drawnTree ?? []).map { "  " + $0 }
        return lines.joined(separator: "\n")
    }
}
