// Spec: https://onnx.ai/onnx/operators/onnx__ImageDecoder.html
// ImageDecoder on images made here and encoded losslessly with the same Debian libraries the
// kernel decodes with (stb_image_write for BMP, libtiff, libwebp, OpenJPEG; PGM/PPM written by
// hand), in every pixel_format, and the errors for truncated or unsupported data.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <openjpeg.h>
#include <stb_image_write.h>
#include <tiffio.h>
#include <webp/encode.h>

#include "op_tester.h"

namespace parity::runtime {
namespace {

using testing::OpTester;
using Bytes = std::vector<uint8_t>;

/// A seeded RGB image, [height, width, 3].
struct Image {
  int width = 0, height = 0;
  Bytes rgb;
};

Image random_image(int width, int height, uint32_t seed) {
  std::mt19937 rng(seed);
  Image image{width, height, Bytes(static_cast<size_t>(width) * height * 3)};
  for (uint8_t& v : image.rgb) v = static_cast<uint8_t>(rng());
  return image;
}

Bytes read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("parity_image_decoder_" + std::to_string(::getpid()) + "_" + name);
}

// --- encoders ---------------------------------------------------------------------------------

Bytes encode_bmp(const Image& image) {
  Bytes out;
  auto append = [](void* context, void* data, int size) {
    auto* bytes = static_cast<Bytes*>(context);
    bytes->insert(bytes->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
  };
  EXPECT_NE(stbi_write_bmp_to_func(append, &out, image.width, image.height, 3, image.rgb.data()), 0);
  return out;
}

/// A TIFF of `samples` 8-bit samples per pixel (1 gray, 3 RGB, 4 RGBA) taken from `image` (gray:
/// the red channel; alpha: 255 - red), interleaved or planar.
Bytes encode_tiff(const Image& image, int samples, bool planar, uint16_t compression = COMPRESSION_NONE) {
  const auto path = temp_path("image.tif");
  TIFF* tiff = TIFFOpen(path.c_str(), "w");
  EXPECT_NE(tiff, nullptr);
  TIFFSetField(tiff, TIFFTAG_IMAGEWIDTH, image.width);
  TIFFSetField(tiff, TIFFTAG_IMAGELENGTH, image.height);
  TIFFSetField(tiff, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField(tiff, TIFFTAG_SAMPLESPERPIXEL, samples);
  TIFFSetField(tiff, TIFFTAG_PHOTOMETRIC, samples == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB);
  TIFFSetField(tiff, TIFFTAG_PLANARCONFIG, planar ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
  TIFFSetField(tiff, TIFFTAG_COMPRESSION, compression);
  TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, 4);
  if (samples == 4) {
    const uint16_t extra = EXTRASAMPLE_UNASSALPHA;
    TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, 1, &extra);
  }
  auto sample = [&](int x, int y, int s) -> uint8_t {
    const uint8_t* p = image.rgb.data() + (static_cast<size_t>(y) * image.width + x) * 3;
    return s < 3 ? p[s] : static_cast<uint8_t>(255 - p[0]);
  };
  Bytes line(static_cast<size_t>(image.width) * samples);
  for (int plane = 0; plane < (planar ? samples : 1); ++plane)
    for (int y = 0; y < image.height; ++y) {
      for (int x = 0; x < image.width; ++x)
        if (planar) line[x] = sample(x, y, plane);
        else
          for (int s = 0; s < samples; ++s) line[static_cast<size_t>(x) * samples + s] = sample(x, y, s);
      EXPECT_EQ(TIFFWriteScanline(tiff, line.data(), y, static_cast<uint16_t>(plane)), 1);
    }
  TIFFClose(tiff);
  Bytes out = read_file(path);
  std::filesystem::remove(path);
  return out;
}

Bytes encode_webp_lossless(const Image& image) {
  uint8_t* data = nullptr;
  const size_t size = WebPEncodeLosslessRGB(image.rgb.data(), image.width, image.height, image.width * 3, &data);
  EXPECT_GT(size, 0u);
  Bytes out(data, data + size);
  WebPFree(data);
  return out;
}

/// Lossless (reversible 5/3 wavelet, OpenJPEG's default) JPEG 2000 of `components` components
/// (1: the red channel, 3: RGB): a JP2 file or a raw codestream.
Bytes encode_jpeg2000(const Image& image, int components, bool codestream) {
  std::vector<opj_image_cmptparm_t> params(static_cast<size_t>(components));
  for (opj_image_cmptparm_t& p : params) {
    p = {};
    p.dx = p.dy = 1;
    p.w = image.width;
    p.h = image.height;
    p.prec = 8;
    p.sgnd = 0;
  }
  opj_image_t* encoded =
      opj_image_create(components, params.data(), components == 1 ? OPJ_CLRSPC_GRAY : OPJ_CLRSPC_SRGB);
  encoded->x1 = image.width;
  encoded->y1 = image.height;
  for (int c = 0; c < components; ++c)
    for (size_t i = 0; i < static_cast<size_t>(image.width) * image.height; ++i) encoded->comps[c].data[i] = image.rgb[3 * i + c];
  opj_cparameters_t parameters;
  opj_set_default_encoder_parameters(&parameters);
  parameters.numresolution = 3;  // the default 6 levels need at least 32 x 32 pixels
  opj_codec_t* codec = opj_create_compress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
  const auto path = temp_path(codestream ? "image.j2k" : "image.jp2");
  opj_stream_t* stream = opj_stream_create_default_file_stream(path.c_str(), OPJ_FALSE);
  const bool ok = opj_setup_encoder(codec, &parameters, encoded) && opj_start_compress(codec, encoded, stream) &&
                  opj_encode(codec, stream) && opj_end_compress(codec, stream);
  EXPECT_TRUE(ok);
  opj_stream_destroy(stream);
  opj_destroy_codec(codec);
  opj_image_destroy(encoded);
  Bytes out = read_file(path);
  std::filesystem::remove(path);
  return out;
}

/// Binary PPM (P6) or PGM (P5, the red channel).
Bytes encode_pnm(const Image& image, bool gray) {
  const std::string header =
      std::string(gray ? "P5" : "P6") + "\n# parity\n" + std::to_string(image.width) + " " + std::to_string(image.height) + "\n255\n";
  Bytes out(header.begin(), header.end());
  for (size_t i = 0; i < image.rgb.size(); i += 3)
    gray ? out.push_back(image.rgb[i]) : (void)out.insert(out.end(), image.rgb.begin() + i, image.rgb.begin() + i + 3);
  return out;
}

// --- expectations -----------------------------------------------------------------------------

/// The image with every pixel's channels replaced by its red channel (what a gray file holds).
Image red_as_gray(const Image& image) {
  Image gray = image;
  for (size_t i = 0; i < gray.rgb.size(); i += 3) gray.rgb[i + 1] = gray.rgb[i + 2] = gray.rgb[i];
  return gray;
}

Tensor expected_output(const Image& image, const std::string& pixel_format) {
  const int64_t h = image.height, w = image.width;
  if (pixel_format == "Grayscale") {
    Tensor t(DType::kUInt8, {h, w, 1});
    for (int64_t i = 0; i < h * w; ++i) {
      const uint8_t* p = image.rgb.data() + 3 * i;
      t.data<uint8_t>()[i] = static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
    }
    return t;
  }
  Tensor t(DType::kUInt8, {h, w, 3});
  for (int64_t i = 0; i < h * w; ++i)
    for (int c = 0; c < 3; ++c) t.data<uint8_t>()[3 * i + c] = image.rgb[3 * i + (pixel_format == "BGR" ? 2 - c : c)];
  return t;
}

OpTester decoder(const Bytes& encoded, const std::string& pixel_format) {
  OpTester t("ImageDecoder", 20);
  t.attr("pixel_format", pixel_format);
  t.input(Tensor::from_vector<uint8_t>({static_cast<int64_t>(encoded.size())}, encoded));
  return t;
}

void expect_decodes_to(const Bytes& encoded, const Image& image) {
  for (const char* format : {"RGB", "BGR", "Grayscale"}) {
    SCOPED_TRACE(format);
    decoder(encoded, format).output(expected_output(image, format)).tolerance(0, 0).run();
  }
}

std::string decode_error(const Bytes& encoded) { return decoder(encoded, "RGB").output_shape_only(DType::kUInt8, {}).run_expect_error(ErrorCode::kRuntime); }

// --- tests ------------------------------------------------------------------------------------

TEST(ImageDecoder, BmpEveryPixelFormat) {
  const Image image = random_image(13, 7, 1);  // odd width: BMP rows are padded to 4 bytes
  expect_decodes_to(encode_bmp(image), image);
}

TEST(ImageDecoder, TiffInterleavedPlanarGrayAlphaAndCompressed) {
  const Image image = random_image(11, 9, 2);
  expect_decodes_to(encode_tiff(image, 3, false), image);
  expect_decodes_to(encode_tiff(image, 3, false, COMPRESSION_LZW), image);
  expect_decodes_to(encode_tiff(image, 3, false, COMPRESSION_ADOBE_DEFLATE), image);
  expect_decodes_to(encode_tiff(image, 3, true), image);   // planar: libtiff's RGBA interface
  expect_decodes_to(encode_tiff(image, 1, false), red_as_gray(image));
  expect_decodes_to(encode_tiff(image, 4, false), image);  // alpha dropped
}

TEST(ImageDecoder, WebpLossless) {
  const Image image = random_image(17, 5, 3);
  expect_decodes_to(encode_webp_lossless(image), image);
}

TEST(ImageDecoder, Jpeg2000FileAndCodestreamRgbAndGray) {
  const Image image = random_image(10, 12, 4);
  expect_decodes_to(encode_jpeg2000(image, 3, false), image);
  expect_decodes_to(encode_jpeg2000(image, 3, true), image);
  expect_decodes_to(encode_jpeg2000(image, 1, false), red_as_gray(image));
}

TEST(ImageDecoder, BinaryPpmAndPgm) {
  const Image image = random_image(6, 4, 5);
  expect_decodes_to(encode_pnm(image, false), image);
  expect_decodes_to(encode_pnm(image, true), red_as_gray(image));
}

TEST(ImageDecoder, TruncatedOrCorruptImagesAreOneClearError) {
  const Image image = random_image(16, 16, 6);
  struct Case {
    const char* format;
    Bytes encoded;
  };
  for (Case c : {Case{"BMP", encode_bmp(image)}, Case{"TIFF", encode_tiff(image, 3, false, COMPRESSION_LZW)},
                 Case{"WebP", encode_webp_lossless(image)}, Case{"JPEG 2000", encode_jpeg2000(image, 3, false)},
                 Case{"PNM", encode_pnm(image, false)}}) {
    SCOPED_TRACE(c.format);
    c.encoded.resize(c.encoded.size() / 3);
    const std::string message = decode_error(c.encoded);
    EXPECT_NE(message.find(std::string("cannot decode the ") + c.format + " image"), std::string::npos) << message;
  }
}

TEST(ImageDecoder, ForgedHugeDimensionsAreRefusedBeforeDecoding) {
  Bytes bmp = encode_bmp(random_image(4, 4, 7));
  const int32_t huge = 100000;
  std::memcpy(bmp.data() + 18, &huge, 4);  // BITMAPINFOHEADER width and height
  std::memcpy(bmp.data() + 22, &huge, 4);
  const std::string message = decode_error(bmp);
  EXPECT_NE(message.find("100000 x 100000 pixels, more than parity decodes"), std::string::npos) << message;
  const std::string pnm = "P6\n9999999999 9999999999\n255\n\x01\x02\x03";
  const std::string pnm_message = decode_error(Bytes(pnm.begin(), pnm.end()));
  EXPECT_NE(pnm_message.find("more than parity decodes"), std::string::npos) << pnm_message;
}

TEST(ImageDecoder, CorruptedBytesDecodeOrFailCleanly) {
  // Seeded byte flips and cuts in every format: each run either decodes or throws parity's error.
  const Image image = random_image(24, 20, 8);
  const Bytes sources[] = {encode_bmp(image), encode_tiff(image, 3, false, COMPRESSION_LZW), encode_tiff(image, 3, true),
                           encode_webp_lossless(image), encode_jpeg2000(image, 3, false), encode_jpeg2000(image, 3, true),
                           encode_pnm(image, false)};
  std::mt19937 rng(9);
  for (const Bytes& source : sources)
    for (int trial = 0; trial < 60; ++trial) {
      Bytes corrupt = source;
      for (int flips = 1 + static_cast<int>(rng() % 8); flips > 0; --flips)
        corrupt[8 + rng() % (corrupt.size() - 8)] = static_cast<uint8_t>(rng());
      if (trial % 3 == 0) corrupt.resize(8 + rng() % (corrupt.size() - 8));
      try {
        decoder(corrupt, "RGB").output_shape_only(DType::kUInt8, {}).run_outputs();
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kRuntime) << e.what();
      }
    }
}

TEST(ImageDecoder, UnsupportedVariantsAreNamed) {
  const std::string ascii = "P3\n1 1\n255\n1 2 3\n";
  EXPECT_NE(decode_error(Bytes(ascii.begin(), ascii.end())).find("ASCII or 1-bit PNM (P3)"), std::string::npos);
  const Bytes garbage = {'G', 'I', 'F', '8', '9', 'a', 0, 0};
  EXPECT_NE(decode_error(garbage).find("unknown format"), std::string::npos);
}

}  // namespace
}  // namespace parity::runtime
