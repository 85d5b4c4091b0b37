#include "core/formats/npz.h"

#include <zip.h>

#include <memory>
#include <vector>

#include "core/formats/file_io.h"
#include "core/formats/npy.h"

namespace parity {

namespace {

std::string zip_error_text(zip_error_t* error) {
  std::string text = zip_error_strerror(error);
  zip_error_fini(error);
  return text;
}

struct ArchiveCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
using ArchivePtr = std::unique_ptr<zip_t, ArchiveCloser>;

std::string read_member(zip_t* archive, zip_uint64_t index, const std::string& what) {
  zip_stat_t st;
  zip_stat_init(&st);
  PARITY_CHECK(zip_stat_index(archive, index, 0, &st) == 0, kInvalidModel, what,
               ": cannot read member ", index, ": ", zip_strerror(archive));
  zip_file_t* file = zip_fopen_index(archive, index, 0);
  PARITY_CHECK(file, kInvalidModel, what, ": cannot open member '", st.name, "': ",
               zip_strerror(archive));
  std::string data;
  if (st.valid & ZIP_STAT_SIZE) data.reserve(static_cast<size_t>(st.size));
  char buffer[1 << 16];
  for (;;) {
    const zip_int64_t n = zip_fread(file, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      const std::string message = zip_error_strerror(zip_file_get_error(file));
      zip_fclose(file);
      fail(ErrorCode::kInvalidModel, what, ": corrupt member '", st.name, "': ", message);
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  const int close_error = zip_fclose(file);
  if (close_error != 0) {
    zip_error_t error;
    zip_error_init_with_code(&error, close_error);
    fail(ErrorCode::kInvalidModel, what, ": corrupt member '", st.name, "': ", zip_error_text(&error));
  }
  return data;
}

}  // namespace

bool looks_like_zip(std::string_view bytes) {
  return bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
         bytes.substr(0, 4) == std::string_view("PK\x05\x06", 4);
}

std::vector<std::pair<std::string, std::string>> zip_members_from_bytes(const std::string& bytes,
                                                                        const std::string& what) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  PARITY_CHECK(source, kInvalidModel, what, ": cannot read archive: ", zip_error_text(&error));
  ArchivePtr archive(zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive) {
    zip_source_free(source);
    fail(ErrorCode::kInvalidModel, what, ": not a valid .npz (zip) archive: ", zip_error_text(&error));
  }
  zip_error_fini(&error);
  std::vector<std::pair<std::string, std::string>> members;
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw_name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), 0);
    PARITY_CHECK(raw_name, kInvalidModel, what, ": cannot read the name of member ", i);
    const std::string name = raw_name;
    if (!name.empty() && name.back() == '/') continue;  // a folder entry
    members.emplace_back(name, read_member(archive.get(), static_cast<zip_uint64_t>(i), what));
  }
  return members;
}

TensorMap npz_from_bytes(const std::string& bytes, const std::string& what) {
  TensorMap tensors;
  for (auto& [member, data] : zip_members_from_bytes(bytes, what)) {
    std::string name = member;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    PARITY_CHECK(!tensors.contains(name), kInvalidModel, what, ": duplicate tensor '", name, "'");
    tensors.set(name, npy_from_string(std::move(data), what + " member '" + member + "'"));
  }
  return tensors;
}

TensorMap read_npz(const std::string& path) {
  return with_error_context({.file = path}, [&] { return npz_from_bytes(formats::read_binary_file(path), path); });
}

void write_npz(const std::string& path, const TensorMap& tensors, bool compressed) {
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto& [name, tensor] : tensors) {
    PARITY_CHECK(!name.empty(), kInvalidArgument, "cannot write a tensor with an empty name to ", path);
    try {
      members.emplace_back(name + ".npy", npy_to_bytes(tensor));
    } catch (const Error& e) {
      fail_at(e.with_missing({.tensor = name, .file = path}).context(), e.code(), "tensor '", name,
              "' cannot be written to ", path, ": ", e.what());
    }
  }
  formats::AtomicFile file(path);
  if (members.empty()) {
    // libzip deletes an archive that ends up empty; numpy writes a bare end-of-directory record.
    file.write(std::string("PK\x05\x06", 4) + std::string(18, '\0'));
    file.commit();
    return;
  }
  int open_error = 0;
  ArchivePtr archive(zip_open(file.temp_path().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &open_error));
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, open_error);
    fail(ErrorCode::kIo, "cannot write ", path, ": ", zip_error_text(&error));
  }
  for (const auto& [member_name, data] : members) {
    zip_source_t* source = zip_source_buffer(archive.get(), data.data(), data.size(), 0);
    PARITY_CHECK(source, kIo, "cannot write ", path, ": ", zip_strerror(archive.get()));
    const zip_int64_t index = zip_file_add(archive.get(), member_name.c_str(), source,
                                           ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE);
    if (index < 0) {
      zip_source_free(source);
      fail(ErrorCode::kIo, "cannot write ", path, ": ", zip_strerror(archive.get()));
    }
    PARITY_CHECK(zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index),
                                          compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0,
                 kIo, "cannot write ", path, ": ", zip_strerror(archive.get()));
  }
  // zip_close writes the archive over the temporary file; commit() moves it into place.
  zip_t* raw = archive.release();
  if (zip_close(raw) != 0) {
    const std::string message = zip_strerror(raw);
    zip_discard(raw);
    fail(ErrorCode::kIo, "cannot write ", path, ": ", message);
  }
  file.commit();
}

}  // namespace parity
