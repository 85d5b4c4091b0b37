// Spec: https://onnx.ai/onnx/operators/onnx__ImageDecoder.html
// ImageDecoder-20: an encoded image (1-D uint8) to an [H, W, C] uint8 tensor, RGB, BGR or
// Grayscale. JPEG is decoded with libjpeg(-turbo) and PNG with libpng, Debian's codec libraries;
// other formats (BMP, JPEG 2000, PNM, TIFF, WebP) are refused with a clear error. Grayscale is
// computed from the decoded RGB with the ITU-R 601-2 weights in 16-bit fixed point, as ONNX's
// reference (PIL's convert("L")) does.
// jpeglib.h uses size_t and FILE without including their headers.
#include <cstddef>
#include <cstdio>

#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <csetjmp>
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

// The format by its signature; the ones parity has no decoder for are named in the error.
Rgb decode(const uint8_t* data, size_t size, const KernelContext& ctx) {
  if (starts_with(data, size, {0xFF, 0xD8, 0xFF})) return decode_jpeg(data, size, ctx);
  if (starts_with(data, size, {0x89, 'P', 'N', 'G'})) return decode_png(data, size, ctx);
  std::string format = "an unknown format";
  if (starts_with(data, size, {'B', 'M'})) format = "BMP";
  else if (starts_with(data, size, {0x00, 0x00, 0x00, 0x0C, 'j', 'P'}) || starts_with(data, size, {0xFF, 0x4F, 0xFF, 0x51}))
    format = "JPEG 2000";
  else if (starts_with(data, size, {'I', 'I', 42, 0}) || starts_with(data, size, {'M', 'M', 0, 42})) format = "TIFF";
  else if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0) format = "WebP";
  else if (size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6') format = "PNM";
  ctx.fail("the encoded image is ", format, "; parity decodes JPEG and PNG");
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
