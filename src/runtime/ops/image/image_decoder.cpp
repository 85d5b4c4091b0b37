// Spec: https://onnx.ai/onnx/operators/onnx__ImageDecoder.html
// ImageDecoder-20: an encoded image (1-D uint8) to an [H, W, C] uint8 tensor, RGB, BGR or
// Grayscale. Every format is decoded by one of Debian's codec libraries, picked by the file's
// signature: JPEG with libjpeg(-turbo), PNG with libpng, TIFF with libtiff, WebP with libwebp,
// JPEG 2000 (JP2 file or raw codestream) with OpenJPEG, and BMP and binary PNM (PGM P5 / PPM P6)
// with stb_image (8-bit, maxval 255). Grayscale is computed from the decoded RGB with the ITU-R 601-2 weights in
// 16-bit fixed point, as ONNX's reference (PIL's convert("L")) does; a gray image stays as it is.
// An alpha channel is dropped (as PIL's convert("RGB") does), except that libpng composites PNG
// alpha as before.
// jpeglib.h uses size_t and FILE without including their headers.
#include <cstddef>
#include <cstdio>

#include <jpeglib.h>
#include <openjpeg.h>
#include <png.h>
#include <stb_image.h>
#include <tiffio.h>
#include <webp/decode.h>

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <cstdarg>
#include <limits>
#include <optional>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

struct Rgb {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> pixels;  // height * width * 3
};

bool starts_with(const uint8_t* data, size_t size, std::initializer_list<uint8_t> magic) {
  return size >= magic.size() && std::equal(magic.begin(), magic.end(), data);
}

/// Decoded images are limited to this many pixels (768 MiB as RGB): a forged header must not
/// make the kernel allocate without bound.
constexpr uint64_t kMaxPixels = uint64_t{1} << 28;

void check_pixel_count(uint64_t width, uint64_t height, const char* format, const KernelContext& ctx) {
  if (width == 0 || height == 0) ctx.fail("cannot decode the ", format, " image: it has no pixels");
  if (width > kMaxPixels || height > kMaxPixels || width * height > kMaxPixels)
    ctx.fail("the ", format, " image is ", width, " x ", height, " pixels, more than parity decodes (", kMaxPixels, ")");
}

// libjpeg reports fatal errors through error_exit, which must not return: jump back out.
struct JpegError {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr info) {
  auto* error = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, error->message);
  std::longjmp(error->jump, 1);
}

// Decodes with libjpeg's defaults (slow integer IDCT, fancy upsampling), as PIL does.
Rgb decode_jpeg(const uint8_t* data, size_t size, const KernelContext& ctx) {
  jpeg_decompress_struct info{};
  JpegError error{};
  info.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = jpeg_error_exit;
  Rgb image;
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&info);
    ctx.fail("cannot decode the JPEG image: ", error.message);
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, static_cast<unsigned long>(size));
  jpeg_read_header(&info, TRUE);
  if (uint64_t{info.image_width} * info.image_height > kMaxPixels) {
    const uint64_t width = info.image_width, height = info.image_height;
    jpeg_destroy_decompress(&info);
    check_pixel_count(width, height, "JPEG", ctx);
  }
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  image.height = info.output_height;
  image.width = info.output_width;
  image.pixels.resize(static_cast<size_t>(image.height * image.width * 3));
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = image.pixels.data() + static_cast<size_t>(info.output_scanline) * image.width * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return image;
}

Rgb decode_png(const uint8_t* data, size_t size, const KernelContext& ctx) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, data, size)) ctx.fail("cannot decode the PNG image: ", png.message);
  if (uint64_t{png.width} * png.height > kMaxPixels) {
    png_image_free(&png);
    check_pixel_count(png.width, png.height, "PNG", ctx);
  }
  png.format = PNG_FORMAT_RGB;
  Rgb image;
  image.height = png.height;
  image.width = png.width;
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    const std::string message = png.message;
    png_image_free(&png);
    ctx.fail("cannot decode the PNG image: ", message);
  }
  return image;
}

/// Copies 8-bit samples (`channels` per pixel, channel 0..2 = RGB, or 1 = gray) into RGB.
void to_rgb(const uint8_t* src, int64_t pixels, int channels, uint8_t* dst) {
  for (int64_t i = 0; i < pixels; ++i, src += channels, dst += 3) {
    dst[0] = src[0];
    dst[1] = channels >= 3 ? src[1] : src[0];
    dst[2] = channels >= 3 ? src[2] : src[0];
  }
}

// stb_image reads past the end of a truncated BMP or PNM as zeros, so their sizes are checked
// here first (PIL refuses truncated images too).

/// A binary PNM header: magic, width, height and maxval as decimal tokens separated by
/// whitespace and '#' comments, then one whitespace byte before the samples.
struct PnmHeader {
  size_t data_offset = 0;
  uint64_t width = 0, height = 0, maxval = 0;
};

std::optional<PnmHeader> read_pnm_header(const uint8_t* data, size_t size) {
  size_t pos = 2;  // after P5 / P6
  uint64_t values[3] = {};
  for (uint64_t& value : values) {
    while (pos < size && (std::isspace(data[pos]) || data[pos] == '#')) {
      if (data[pos] == '#')
        while (pos < size && data[pos] != '\n') ++pos;
      else
        ++pos;
    }
    if (pos >= size || !std::isdigit(data[pos])) return std::nullopt;
    for (; pos < size && std::isdigit(data[pos]) && value < (uint64_t{1} << 40); ++pos) value = value * 10 + (data[pos] - '0');
  }
  if (pos >= size || !std::isspace(data[pos])) return std::nullopt;
  return PnmHeader{pos + 1, values[0], values[1], values[2]};
}

void check_complete_pnm(const uint8_t* data, size_t size, const KernelContext& ctx) {
  const auto header = read_pnm_header(data, size);
  if (!header) ctx.fail("cannot decode the PNM image: malformed header");
  if (header->maxval != 255)
    ctx.fail("cannot decode the PNM image: maxval ", header->maxval, " (parity decodes 8-bit PGM/PPM, maxval 255)");
  check_pixel_count(header->width, header->height, "PNM", ctx);  // also keeps `needed` from overflowing
  const uint64_t channels = data[1] == '6' ? 3 : 1;
  const uint64_t needed = header->width * header->height * channels;
  if (size - header->data_offset < needed)
    ctx.fail("cannot decode the PNM image: truncated (", size - header->data_offset, " of ", needed, " sample bytes)");
}

void check_complete_bmp(const uint8_t* data, size_t size, const KernelContext& ctx) {
  if (size < 14) ctx.fail("cannot decode the BMP image: truncated header");
  const uint32_t declared = data[2] | (data[3] << 8) | (data[4] << 16) | (static_cast<uint32_t>(data[5]) << 24);
  if (declared > size) ctx.fail("cannot decode the BMP image: truncated (", size, " of ", declared, " bytes)");
}

// BMP and binary PNM through stb_image.
Rgb decode_with_stb(const uint8_t* data, size_t size, const char* format, const KernelContext& ctx) {
  if (size > static_cast<size_t>(std::numeric_limits<int>::max())) ctx.fail("the ", format, " image is too large");
  if (format == std::string("PNM")) check_complete_pnm(data, size, ctx);
  else check_complete_bmp(data, size, ctx);
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), &width, &height, &channels))
    ctx.fail("cannot decode the ", format, " image: ", stbi_failure_reason());
  check_pixel_count(width, height, format, ctx);
  stbi_uc* pixels = stbi_load_from_memory(data, static_cast<int>(size), &width, &height, &channels, 3);
  if (!pixels) ctx.fail("cannot decode the ", format, " image: ", stbi_failure_reason());
  Rgb image;
  image.height = height;
  image.width = width;
  image.pixels.assign(pixels, pixels + static_cast<size_t>(height) * width * 3);
  stbi_image_free(pixels);
  return image;
}

Rgb decode_webp(const uint8_t* data, size_t size, const KernelContext& ctx) {
  int width = 0, height = 0;
  if (!WebPGetInfo(data, size, &width, &height)) ctx.fail("cannot decode the WebP image (not a valid WebP header)");
  check_pixel_count(width, height, "WebP", ctx);
  uint8_t* pixels = WebPDecodeRGB(data, size, &width, &height);
  if (!pixels) ctx.fail("cannot decode the WebP image (libwebp rejected it)");
  Rgb image;
  image.height = height;
  image.width = width;
  image.pixels.assign(pixels, pixels + static_cast<size_t>(height) * width * 3);
  WebPFree(pixels);
  return image;
}

// libtiff reads through client callbacks over the encoded bytes; its messages go to `error`
// (per handle, so nothing is printed and no global handler changes).
struct TiffSource {
  const uint8_t* data;
  toff_t size;
  toff_t position = 0;
  std::string error = "not a TIFF image";
};

tmsize_t tiff_read(thandle_t handle, void* buffer, tmsize_t n) {
  auto* src = static_cast<TiffSource*>(handle);
  const toff_t count = std::min<toff_t>(static_cast<toff_t>(n), src->size - std::min(src->position, src->size));
  std::memcpy(buffer, src->data + src->position, count);
  src->position += count;
  return static_cast<tmsize_t>(count);
}
tmsize_t tiff_write(thandle_t, void*, tmsize_t) { return 0; }
toff_t tiff_seek(thandle_t handle, toff_t offset, int whence) {
  auto* src = static_cast<TiffSource*>(handle);
  const toff_t base = whence == SEEK_CUR ? src->position : whence == SEEK_END ? src->size : 0;
  src->position = base + offset;
  return src->position;
}
int tiff_close(thandle_t) { return 0; }
toff_t tiff_size(thandle_t handle) { return static_cast<TiffSource*>(handle)->size; }

int tiff_error(TIFF*, void* user_data, const char*, const char* format, va_list args) {
  char message[512];
  std::vsnprintf(message, sizeof(message), format, args);
  static_cast<TiffSource*>(user_data)->error = message;
  return 1;  // handled: libtiff's global handler (stderr) is not called
}
int tiff_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

// The first image of a TIFF file. 8-bit RGB(A) and gray images whose samples are interleaved
// are read scanline by scanline in the file's row order (as PIL does); every other layout
// (palette, 16-bit, planar, tiled, YCbCr, CMYK ...) goes through libtiff's RGBA interface.
Rgb decode_tiff(const uint8_t* data, size_t size, const KernelContext& ctx) {
  TiffSource source{data, static_cast<toff_t>(size)};
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, tiff_error, &source);
  TIFFOpenOptionsSetWarningHandlerExtR(options, tiff_warning, &source);
  TIFF* tiff = TIFFClientOpenExt("image", "rm", &source, tiff_read, tiff_write, tiff_seek, tiff_close, tiff_size,
                                 nullptr, nullptr, options);
  TIFFOpenOptionsFree(options);
  if (!tiff) ctx.fail("cannot decode the TIFF image: ", source.error);
  struct Closer {
    TIFF* t;
    ~Closer() { TIFFClose(t); }
  } closer{tiff};
  uint32_t width = 0, height = 0;
  uint16_t bits = 0, samples = 1, planar = PLANARCONFIG_CONTIG, photometric = 0;
  TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted(tiff, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tiff, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetField(tiff, TIFFTAG_PHOTOMETRIC, &photometric);
  check_pixel_count(width, height, "TIFF", ctx);
  Rgb image;
  image.height = height;
  image.width = width;
  image.pixels.resize(static_cast<size_t>(height) * width * 3);
  const bool plain = bits == 8 && planar == PLANARCONFIG_CONTIG && !TIFFIsTiled(tiff) &&
                     ((photometric == PHOTOMETRIC_RGB && samples >= 3) || (photometric == PHOTOMETRIC_MINISBLACK && samples >= 1));
  if (plain) {
    std::vector<uint8_t> line(static_cast<size_t>(TIFFScanlineSize(tiff)));
    if (line.size() < static_cast<size_t>(width) * samples) ctx.fail("cannot decode the TIFF image: short scanlines");
    const int channels = photometric == PHOTOMETRIC_RGB ? samples : 1;
    for (uint32_t row = 0; row < height; ++row) {
      if (TIFFReadScanline(tiff, line.data(), row, 0) < 0) ctx.fail("cannot decode the TIFF image: ", source.error);
      if (photometric == PHOTOMETRIC_RGB) {
        to_rgb(line.data(), width, channels, image.pixels.data() + static_cast<size_t>(row) * width * 3);
      } else {
        uint8_t* dst = image.pixels.data() + static_cast<size_t>(row) * width * 3;
        for (uint32_t x = 0; x < width; ++x, dst += 3) dst[0] = dst[1] = dst[2] = line[static_cast<size_t>(x) * samples];
      }
    }
    return image;
  }
  std::vector<uint32_t> rgba(static_cast<size_t>(height) * width);
  if (!TIFFReadRGBAImageOriented(tiff, width, height, rgba.data(), ORIENTATION_TOPLEFT, 0))
    ctx.fail("cannot decode the TIFF image: ", source.error);
  for (size_t i = 0; i < rgba.size(); ++i) {
    image.pixels[3 * i] = static_cast<uint8_t>(TIFFGetR(rgba[i]));
    image.pixels[3 * i + 1] = static_cast<uint8_t>(TIFFGetG(rgba[i]));
    image.pixels[3 * i + 2] = static_cast<uint8_t>(TIFFGetB(rgba[i]));
  }
  return image;
}

// OpenJPEG reads through a stream over the encoded bytes.
struct Jp2Source {
  const uint8_t* data;
  OPJ_UINT64 size;
  OPJ_UINT64 position = 0;
};

OPJ_SIZE_T jp2_read(void* buffer, OPJ_SIZE_T n, void* user) {
  auto* src = static_cast<Jp2Source*>(user);
  if (src->position >= src->size) return static_cast<OPJ_SIZE_T>(-1);
  const OPJ_SIZE_T count = static_cast<OPJ_SIZE_T>(std::min<OPJ_UINT64>(n, src->size - src->position));
  std::memcpy(buffer, src->data + src->position, count);
  src->position += count;
  return count;
}
OPJ_OFF_T jp2_skip(OPJ_OFF_T n, void* user) {
  auto* src = static_cast<Jp2Source*>(user);
  const OPJ_OFF_T left = static_cast<OPJ_OFF_T>(src->size - src->position);
  const OPJ_OFF_T step = std::clamp<OPJ_OFF_T>(n, -static_cast<OPJ_OFF_T>(src->position), left);
  src->position += step;
  return step;
}
OPJ_BOOL jp2_seek(OPJ_OFF_T offset, void* user) {
  auto* src = static_cast<Jp2Source*>(user);
  if (offset < 0 || static_cast<OPJ_UINT64>(offset) > src->size) return OPJ_FALSE;
  src->position = static_cast<OPJ_UINT64>(offset);
  return OPJ_TRUE;
}

// JPEG 2000: 1 (gray), 2 (gray + alpha), 3 or 4 (RGB + alpha) components of equal size; samples
// of more than 8 bits are scaled to 8 bits, signed samples shifted to unsigned.
Rgb decode_jpeg2000(const uint8_t* data, size_t size, bool codestream, const KernelContext& ctx) {
  Jp2Source source{data, size};
  opj_stream_t* stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
  opj_stream_set_user_data(stream, &source, nullptr);
  opj_stream_set_user_data_length(stream, size);
  opj_stream_set_read_function(stream, jp2_read);
  opj_stream_set_skip_function(stream, jp2_skip);
  opj_stream_set_seek_function(stream, jp2_seek);
  opj_codec_t* codec = opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
  opj_dparameters_t parameters;
  opj_set_default_decoder_parameters(&parameters);
  struct Cleanup {
    opj_stream_t* stream;
    opj_codec_t* codec;
    opj_image_t* image = nullptr;
    ~Cleanup() {
      if (image) opj_image_destroy(image);
      opj_destroy_codec(codec);
      opj_stream_destroy(stream);
    }
  } cleanup{stream, codec};
  // Strict mode: a truncated codestream is an error (as in PIL), not a partly decoded image.
  if (!opj_setup_decoder(codec, &parameters) || !opj_decoder_set_strict_mode(codec, OPJ_TRUE) ||
      !opj_read_header(stream, codec, &cleanup.image) || !cleanup.image || cleanup.image->numcomps == 0)
    ctx.fail("cannot decode the JPEG 2000 image (OpenJPEG rejected its header)");
  check_pixel_count(cleanup.image->x1 - cleanup.image->x0, cleanup.image->y1 - cleanup.image->y0, "JPEG 2000", ctx);
  if (!opj_decode(codec, stream, cleanup.image) || !opj_end_decompress(codec, stream))
    ctx.fail("cannot decode the JPEG 2000 image (OpenJPEG rejected it)");
  const opj_image_t* decoded = cleanup.image;
  const opj_image_comp_t* comps = decoded->comps;
  const OPJ_UINT32 width = comps[0].w, height = comps[0].h;
  const int color = decoded->numcomps >= 3 ? 3 : 1;
  for (int c = 0; c < color; ++c)
    if (comps[c].w != width || comps[c].h != height || !comps[c].data || comps[c].prec == 0 || comps[c].prec > 16)
      ctx.fail("cannot decode the JPEG 2000 image: subsampled components or samples wider than 16 bits");
  Rgb image;
  image.height = height;
  image.width = width;
  image.pixels.resize(static_cast<size_t>(height) * width * 3);
  const size_t pixels = static_cast<size_t>(height) * width;
  for (int c = 0; c < 3; ++c) {
    const opj_image_comp_t& comp = comps[color == 3 ? c : 0];
    const int shift = comp.prec > 8 ? static_cast<int>(comp.prec) - 8 : 0;
    const int offset = comp.sgnd ? 1 << (comp.prec - 1) : 0;
    const int top = (1 << comp.prec) - 1;
    for (size_t i = 0; i < pixels; ++i)
      image.pixels[3 * i + c] = static_cast<uint8_t>(std::clamp(comp.data[i] + offset, 0, top) >> shift);
  }
  return image;
}

// The format by its signature; anything else is refused naming what it looks like.
Rgb decode(const uint8_t* data, size_t size, const KernelContext& ctx) {
  if (starts_with(data, size, {0xFF, 0xD8, 0xFF})) return decode_jpeg(data, size, ctx);
  if (starts_with(data, size, {0x89, 'P', 'N', 'G'})) return decode_png(data, size, ctx);
  if (starts_with(data, size, {'B', 'M'})) return decode_with_stb(data, size, "BMP", ctx);
  if (starts_with(data, size, {0x00, 0x00, 0x00, 0x0C, 'j', 'P', ' ', ' '})) return decode_jpeg2000(data, size, false, ctx);
  if (starts_with(data, size, {0xFF, 0x4F, 0xFF, 0x51})) return decode_jpeg2000(data, size, true, ctx);
  if (starts_with(data, size, {'I', 'I', 42, 0}) || starts_with(data, size, {'M', 'M', 0, 42}))
    return decode_tiff(data, size, ctx);
  if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0)
    return decode_webp(data, size, ctx);
  if (starts_with(data, size, {'P', '5'}) || starts_with(data, size, {'P', '6'})) return decode_with_stb(data, size, "PNM", ctx);
  if (size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '4')
    ctx.fail("the encoded image is an ASCII or 1-bit PNM (P", static_cast<char>(data[1]),
             "); parity decodes binary PGM and PPM (P5, P6)");
  ctx.fail("the encoded image is in an unknown format; parity decodes JPEG, PNG, BMP, TIFF, WebP, JPEG 2000 and PNM");
}

class ImageDecoderKernel final : public Kernel {
 public:
  explicit ImageDecoderKernel(const KernelInit& init) : pixel_format_(init.attr_string("pixel_format", "RGB")) {
    if (pixel_format_ != "RGB" && pixel_format_ != "BGR" && pixel_format_ != "Grayscale")
      init.fail("pixel_format must be RGB, BGR or Grayscale, got '", pixel_format_, "'");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& encoded = ctx.input(0);
    if (encoded.dtype() != DType::kUInt8 || encoded.rank() != 1)
      ctx.fail("encoded_stream must be a 1-D uint8 tensor, got ", dtype_name(encoded.dtype()), " ",
               shape_to_string(encoded.shape()));
    const Rgb image = decode(encoded.data<uint8_t>(), static_cast<size_t>(encoded.numel()), ctx);
    const int64_t pixels = image.height * image.width;
    const uint8_t* rgb = image.pixels.data();
    if (pixel_format_ == "Grayscale") {
      uint8_t* out = ctx.allocate_output(0, DType::kUInt8, {image.height, image.width, 1}).data<uint8_t>();
      for (int64_t i = 0; i < pixels; ++i, rgb += 3)
        out[i] = static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
      return;
    }
    uint8_t* out = ctx.allocate_output(0, DType::kUInt8, {image.height, image.width, 3}).data<uint8_t>();
    const bool bgr = pixel_format_ == "BGR";
    for (int64_t i = 0; i < pixels; ++i, rgb += 3, out += 3) {
      out[0] = rgb[bgr ? 2 : 0];
      out[1] = rgb[1];
      out[2] = rgb[bgr ? 0 : 2];
    }
  }

 private:
  std::string pixel_format_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "ImageDecoder", 20, ImageDecoderKernel);

}  // namespace parity::runtime
