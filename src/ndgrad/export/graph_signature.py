"""torch.export.graph_signature: what each placeholder and output of an exported graph is
(a parameter, a buffer, a lifted constant tensor, a user input; a user output)."""
import dataclasses
from enum import Enum, auto

__all__ = ["ConstantArgument", "ExportGraphSignature", "InputKind", "InputSpec", "OutputKind",
           "OutputSpec", "TensorArgument", "SymIntArgument", "CustomObjArgument",
           "TokenArgument", "SymBoolArgument", "SymFloatArgument", "ArgumentSpec"]


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class TokenArgument:
    name: str


@dataclasses.dataclass
class SymIntArgument:
    name: str


@dataclasses.dataclass
class SymFloatArgument:
    name: str


@dataclasses.dataclass
class SymBoolArgument:
    name: str


@dataclasses.dataclass
class CustomObjArgument:
    name: str
    class_fqn: str
    fake_val: object = None


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: object


ArgumentSpec = (TensorArgument, SymIntArgument, SymFloatArgument, SymBoolArgument,
                ConstantArgument, CustomObjArgument, TokenArgument)


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: object
    target: object
    persistent: object = None

    def __post_init__(self):
        if self.kind == InputKind.BUFFER:
            assert self.persistent is not None, "Failed to specify persistent flag on BUFFER."


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: object


def _sig_str(spec):
    name = getattr(spec.arg, "name", None)
    if isinstance(spec.arg, ConstantArgument):
        name = spec.arg.name
    s = f"{name}: {spec.kind.name}"
    if spec.target is not None:
        s += f" target='{spec.target}'"
    if getattr(spec, "persistent", None) is not None:
        s += f" persistent={spec.persistent}"
    return s


@dataclasses.dataclass
class ExportGraphSignature:
    """The kinds of the graph's inputs (in placeholder order) and outputs."""
    input_specs: list
    output_specs: list

    @property
    def parameters(self):
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.PARAMETER)

    @property
    def buffers(self):
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        return tuple(s.target for s in self.input_specs
                     if s.kind == InputKind.BUFFER and s.persistent is False)

    @property
    def lifted_tensor_constants(self):
        return tuple(s.target for s in self.input_specs
                     if s.kind == InputKind.CONSTANT_TENSOR)

    @property
    def lifted_custom_objs(self):
        return ()

    @property
    def user_inputs(self):
        return tuple(s.arg.name if isinstance(s.arg, TensorArgument) else s.arg.value
                     for s in self.input_specs if s.kind == InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        return tuple(s.arg.name if isinstance(s.arg, TensorArgument) else s.arg.value
                     for s in self.output_specs if s.kind == OutputKind.USER_OUTPUT)

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self.input_specs
                if s.kind == InputKind.PARAMETER}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == InputKind.BUFFER}

    @property
    def inputs_to_lifted_tensor_constants(self):
        return {s.arg.name: s.target for s in self.input_specs
                if s.kind == InputKind.CONSTANT_TENSOR}

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind == OutputKind.BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self):
        return {}

    @property
    def backward_signature(self):
        return None

    @property
    def assertion_dep_token(self):
        return None

    @property
    def input_tokens(self):
        return []

    @property
    def output_tokens(self):
        return []

    def __str__(self):
        inputs = "\n".join(_sig_str(s) for s in self.input_specs)
        outputs = "\n".join(_sig_str(s) for s in self.output_specs)
        return f"\n# inputs\n{inputs}\n\n# outputs\n{outputs}\n"
