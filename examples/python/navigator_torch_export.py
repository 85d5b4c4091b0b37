"""Model Navigator's PyTorch export example (seed 004), with parity's navigator."""
import torch
import parity.navigator as nav

device = "cuda" if torch.cuda.is_available() else "cpu"

dataloader = [torch.full((3, 5), 1.0, device=device) for _ in range(10)]

model = torch.nn.Linear(5, 7).to(device).eval()

package_desc = nav.torch.export(
    model=model,
    model_name="example_model",
    dataloader=dataloader,
    opset=13,
    input_names=("input",),
    dynamic_axes={"input": {0: "batch"}},
)

onnx_status = package_desc.get_status(format=nav.Format.ONNX)
if onnx_status:
    onnx_runner = package_desc.get_runner(format=nav.Format.ONNX, runtime=nav.RuntimeProvider.CPU)

# Additional model verification ...
model_is_valid = True # code for model verification
if model_is_valid:
    package_desc.set_verified(format=nav.Format.ONNX, runtime=nav.RuntimeProvider.CPU)

package_desc.save("example_pyt.nav")

loaded_package_desc = nav.load("example_pyt.nav")
