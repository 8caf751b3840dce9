extension CoordinatorView {
    /// The tree drawn with box characters, one line per coordinator, the root first:
    /// `app`, `└─ buy (buy-7, push, photo 1)`. (`photos-admin sessions show` and the console.)
    public var drawnTree: [String] {
        var lines: [String] = []
        func label(_ node: CoordinatorView) -> String {
            var facts: [String] = []
            if node.id != node.kind.rawValue { facts.append(node.id) }
            if let presentation = node.presentation { facts.append(presentation.rawValue) }
            if let photoId = node.photoId { facts.append("photo \(photoId)") }
            return node.kind.rawValue + (facts.isEmpty ? "" : " (" + facts.joined(separator: ", ") + ")")
        }
        func walk(_ node: CoordinatorView, _ indent: String, _ isLast: Bool, _ isRoot: Bool) {
            lines.append(isRoot ? label(node) : indent + (isLast ? "└─ " : "├─ ") + label(node))
            let childIndent = isRoot ? "" : indent + (isLast ? "   " : "│  ")
            for (index, child) in node.children.enumerated() { walk(child, childIndent, index == node.children.count - 1, false) }
        }
        walk(self, "", true, true)
        return lines
    }
}
