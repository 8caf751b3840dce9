import Foundation
import Navigation
import PhotosCore
import PhotosModel

/// A session and its trail as the session page's template shows them.
enum SessionPresentation {
    /// The stacks side by side (the modal ones over the root, as on the phone), the tab bar,
    /// the coordinator tree as text, the top screen's actions.
    static func values(_ view: SessionView, csrf: String) -> [String: Any] {
        var values: [String: Any] = ["layout": view.layout.rawValue, "user": view.user?.username as Any, "csrf": csrf]
        if let tabs = view.tabs {
            values["tabs"] = ["items": tabs.items.map { ["name": $0.tab.rawValue, "selected": $0.tab == tabs.selected] }]
        }
        let topStack = view.navigation.count - 1
        values["stacks"] = view.navigation.enumerated().map { index, stack -> [String: Any] in
            let label = switch stack.presentation {
            case .root: "root"
            case .modal: "modal"
            case .tab: "tab \(stack.tab?.rawValue ?? "")"
            }
            return [
                "presentation": stack.presentation.rawValue, "label": label,
                "screens": stack.screens.enumerated().map { position, screen -> [String: Any] in
                    [
                        "name": screen.screen.rawValue, "photo": screen.photoId.map { String($0) } as Any,
                        "top": index == topStack && position == stack.screens.count - 1,
                    ]
                },
            ]
        }
        values["tree"] = view.coordinators.map { $0.drawnTree.joined(separator: "\n") } ?? "(none)"
        values["actions"] = view.top.map { $0.actions.map(\.rawValue).joined(separator: ", ") } as Any
        return values
    }

    /// Steps that begin what one request caused: the session's start, an action (applied or refused).
    static let groupStarts: Set<String> = [AuditStep.sessionStart.rawValue, AuditStep.action.rawValue, AuditStep.actionRejected.rawValue]

    /// The rows grouped by the action that caused them, each group with its actor and the time
    /// since the group before; `current` marks the step shown.
    static func timeline(_ rows: [AuditRow], current: Int?) -> [[String: Any]] {
        var groups: [[String: Any]] = []
        var steps: [[String: Any]] = []
        var head: AuditRow?
        var previousStart: Date?
        func close() {
            guard let head else { return }
            let started = ISO8601Timestamp.date(from: head.at)
            var gap = ""
            if let started, let previousStart { gap = "+" + duration(started.timeIntervalSince(previousStart)) }
            groups.append(["title": title(head), "actor": head.actor, "gap": gap, "steps": steps])
            previousStart = started ?? previousStart
        }
        for row in rows {
            if head == nil || groupStarts.contains(row.step) {
                close()
                head = row
                steps = []
            }
            steps.append([
                "seq": row.seq, "sessionID": row.sessionId, "step": row.step, "coordinator": row.coordinator as Any,
                "screen": row.screen as Any, "detail": row.detail == "{}" ? "" : row.detail, "at": row.at, "current": row.seq == current,
            ])
        }
        close()
        return groups
    }

    /// One step for the live trail (the browser appends it).
    static func liveStep(_ row: AuditRow) -> [String: Any] {
        [
            "seq": row.seq, "step": row.step, "coordinator": row.coordinator ?? "", "screen": row.screen ?? "",
            "detail": row.detail == "{}" ? "" : row.detail, "at": row.at, "actor": row.actor, "title": title(row),
            "startsGroup": groupStarts.contains(row.step),
        ]
    }

    /// A group's heading: the action's name when the row says it.
    private static func title(_ row: AuditRow) -> String {
        guard row.step != AuditStep.sessionStart.rawValue else { return "session started" }
        if let object = (try? JSONSerialization.jsonObject(with: Data(row.detail.utf8))) as? [String: Any],
           let name = object["name"] as? String ?? object["action"] as? String {
            return row.step == AuditStep.actionRejected.rawValue ? "\(name) (refused)" : name
        }
        return row.step
    }

    /// `0.25 s`, `12 s`, `3 min`, `2 h`.
    static func duration(_ seconds: TimeInterval) -> String {
        switch seconds {
        case ..<10: String(format: "%.2f s", seconds)
        case ..<120: "\(Int(seconds)) s"
        case ..<7_200: "\(Int(seconds / 60)) min"
        default: "\(Int(seconds / 3_600)) h"
        }
    }
}
