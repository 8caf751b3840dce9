import Foundation

/// Reads photos to import from a CSV file (header `title,url,price`) or a JSON array of
/// `{"title", "url"?, "price": "2.50"}` (or `"priceCents": 250`) objects.
public enum PhotoFile {
    /// Reads every photo in `path`, by extension (`.csv` or `.json`).
    /// Throws `bad_request` naming the file and line (or element) of the first problem.
    public static func read(path: String) throws -> [NewPhoto] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw PhotosError.badRequest("\(path): no such file")
        }
        switch (path as NSString).pathExtension.lowercased() {
        case "csv": return try readCSV(path: path)
        case "json": return try readJSON(path: path)
        default: throw PhotosError.badRequest("\(path): expected a .csv or .json file")
        }
    }

    static func readCSV(path: String) throws -> [NewPhoto] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw PhotosError.badRequest("\(path): cannot open")
        }
        defer { try? handle.close() }
        var parser = CSVParser()
        var columns: (title: Int, url: Int?, price: Int)?
        var photos: [NewPhoto] = []
        func take(_ fields: [String], _ line: Int) throws {
            guard let columns else {
                let names = fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let title = names.firstIndex(of: "title"), let price = names.firstIndex(of: "price") else {
                    throw PhotosError.badRequest("\(path):\(line): the header must name the columns title,url,price")
                }
                columns = (title, names.firstIndex(of: "url"), price)
                return
            }
            let expected = [columns.title, columns.price, columns.url ?? 0].max()! + 1
            guard fields.count >= expected else {
                throw PhotosError.badRequest("\(path):\(line): expected \(expected) fields, found \(fields.count)")
            }
            do {
                let photo = NewPhoto(
                    title: fields[columns.title], url: columns.url.map { fields[$0] },
                    priceCents: try Price.cents(from: fields[columns.price]))
                photos.append(try CatalogService.validated(photo))
            } catch let error as PhotosError {
                throw PhotosError.badRequest("\(path):\(line): \(error.message)")
            }
        }
        do {
            while true {
                let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
                if chunk.isEmpty { break }
                try parser.feed(chunk, onRecord: take)
            }
            try parser.finish(onRecord: take)
        } catch let error as CSVParser.ParseError {
            throw PhotosError.badRequest("\(path):\(error.line): malformed CSV: \(error.message)")
        }
        guard columns != nil else { throw PhotosError.badRequest("\(path): empty file (expected a header title,url,price)") }
        return photos
    }

    static func readJSON(path: String) throws -> [NewPhoto] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PhotosError.badRequest("\(path): cannot read")
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw PhotosError.badRequest("\(path): malformed JSON")
        }
        guard let array = parsed as? [Any] else {
            throw PhotosError.badRequest("\(path): expected a JSON array of photos")
        }
        return try array.enumerated().map { index, element in
            let place = "\(path): element \(index + 1)"
            guard let object = element as? [String: Any] else { throw PhotosError.badRequest("\(place): expected an object") }
            guard let title = object["title"] as? String else { throw PhotosError.badRequest("\(place): \"title\" must be a string") }
            let url: String?
            switch object["url"] {
            case nil, is NSNull: url = nil
            case let text as String: url = text
            default: throw PhotosError.badRequest("\(place): \"url\" must be a string")
            }
            let cents: Int
            do {
                if let price = object["price"] as? String {
                    cents = try Price.cents(from: price)
                } else if object["price"] != nil {
                    throw PhotosError.badRequest("\"price\" must be a string like \"2.50\" (or give integer \"priceCents\")")
                } else if !(object["priceCents"] is Bool), let value = object["priceCents"] as? Int {
                    cents = value
                } else {
                    throw PhotosError.badRequest("needs \"price\" (a string like \"2.50\") or integer \"priceCents\"")
                }
                return try CatalogService.validated(NewPhoto(title: title, url: url, priceCents: cents))
            } catch let error as PhotosError {
                throw PhotosError.badRequest("\(place): \(error.message)")
            }
        }
    }
}
