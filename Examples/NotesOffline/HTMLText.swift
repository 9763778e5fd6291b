import Foundation

/// The little HTML handling the example needs: a title, the links, and readable text.
enum HTMLText {
    /// The `<title>`, else the first heading (`<h1>`…`<h6>` or a Markdown `# `), else `nil`.
    static func title(of body: String) -> String? {
        if let title = firstElement("title", in: body) { return title }
        for level in 1...6 {
            if let heading = firstElement("h\(level)", in: body) { return heading }
        }
        for line in body.split(separator: "\n") where line.hasPrefix("# ") {
            return String(line.dropFirst(2)).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// The targets of `href` attributes, in order, without duplicates or fragments.
    static func links(in body: String) -> [String] {
        var links: [String] = []
        var seen = Set<String>()
        var rest = body[...]
        while let range = rest.range(of: "href", options: .caseInsensitive) {
            rest = rest[range.upperBound...].drop { $0 == " " }
            guard rest.first == "=" else { continue }
            rest = rest.dropFirst().drop { $0 == " " }
            let value: Substring
            if let quote = rest.first, quote == "\"" || quote == "'" {
                let inner = rest.dropFirst()
                guard let end = inner.firstIndex(of: quote) else { break }
                value = inner[..<end]
                rest = inner[end...]
            } else {
                let end = rest.firstIndex { $0 == " " || $0 == ">" } ?? rest.endIndex
                value = rest[..<end]
                rest = rest[end...]
            }
            let link = String(value.split(separator: "#", omittingEmptySubsequences: false).first ?? "")
            if !link.isEmpty, seen.insert(link).inserted { links.append(decodeEntities(link)) }
        }
        return links
    }

    /// The text of a page: tags dropped, block ends as line breaks, entities decoded.
    static func plainText(of body: String) -> String {
        var text = ""
        var inTag = false
        var tag = ""
        var skipping = false
        for character in body {
            if inTag {
                if character == ">" {
                    inTag = false
                    let name = tag.lowercased().split(separator: " ").first.map(String.init) ?? ""
                    if ["script", "style", "title"].contains(name) { skipping = true }
                    if ["/script", "/style", "/title"].contains(name) { skipping = false }
                    if ["p", "/p", "br", "br/", "li", "/h1", "/h2", "/h3", "/h4", "div", "/div", "tr"].contains(name) {
                        text += "\n"
                    }
                } else {
                    tag.append(character)
                }
            } else if character == "<" {
                inTag = true
                tag = ""
            } else if !skipping {
                text.append(character)
            }
        }
        let lines = decodeEntities(text).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        var result: [String] = []
        for line in lines where !(line.isEmpty && (result.last?.isEmpty ?? true)) { result.append(line) }
        return result.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&nbsp;", with: " ").replacingOccurrences(of: "&amp;", with: "&")
    }

    private static func firstElement(_ name: String, in body: String) -> String? {
        guard let open = body.range(of: "<\(name)", options: .caseInsensitive),
            let close = body[open.upperBound...].firstIndex(of: ">"),
            let end = body[close...].range(of: "</\(name)>", options: .caseInsensitive)
        else { return nil }
        let text = plainText(of: String(body[body.index(after: close)..<end.lowerBound]))
        return text.isEmpty ? nil : text
    }
}
