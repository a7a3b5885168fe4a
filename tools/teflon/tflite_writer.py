"""Write TensorFlow Lite flatbuffer models (.tflite) with Debian's python3-flatbuffers.

Only the tables and fields the conformance models need, by their field ids in
TensorFlow Lite's schema (tensorflow/lite/schema/schema.fbs, version 3):

  Model:  0 version, 1 operator_codes, 2 subgraphs, 3 description, 4 buffers
  OperatorCode: 0 deprecated_builtin_code (byte), 2 version, 3 builtin_code (int)
  SubGraph: 0 tensors, 1 inputs, 2 outputs, 3 operators, 4 name
  Tensor: 0 shape, 1 type, 2 buffer, 3 name, 4 quantization
  QuantizationParameters: 2 scale, 3 zero_point, 6 quantized_dimension
  Operator: 0 opcode_index, 1 inputs, 2 outputs, 3 builtin_options_type,
            4 builtin_options
  Buffer: 0 data
  file identifier "TFL3"; buffer 0 is the empty sentinel.
"""
import flatbuffers
import numpy as np

# TensorType
FLOAT32, INT32, UINT8, INT8 = 0, 2, 3, 9
# BuiltinOperator
ADD, AVERAGE_POOL_2D, CONCATENATION, CONV_2D, DEPTHWISE_CONV_2D = 0, 1, 2, 3, 4
FULLY_CONNECTED, MAX_POOL_2D, RESHAPE = 9, 17, 22
# BuiltinOptions union members
OPT_CONV, OPT_DEPTHWISE, OPT_POOL, OPT_FC, OPT_CONCAT, OPT_ADD, OPT_RESHAPE = 1, 2, 5, 8, 10, 11, 17
# Padding, ActivationFunctionType
SAME, VALID = 0, 1
ACT_NONE, ACT_RELU, ACT_RELU6 = 0, 1, 3

_NP = {FLOAT32: np.float32, INT32: np.int32, UINT8: np.uint8, INT8: np.int8}


class Model:
    def __init__(self):
        self.tensors = []   # (name, shape, type, buffer, scale, zero_point)
        self.buffers = [b""]
        self.ops = []       # (opcode, inputs, outputs, options_type, options)
        self.opcodes = []

    def tensor(self, name, shape, ttype, scale=None, zero_point=0, data=None):
        buf = 0
        if data is not None:
            self.buffers.append(np.asarray(data, dtype=_NP[ttype]).tobytes())
            buf = len(self.buffers) - 1
        self.tensors.append((name, list(shape), ttype, buf, scale, zero_point))
        return len(self.tensors) - 1

    def op(self, opcode, inputs, outputs, options_type=0, options=None):
        """options: list of (field id, kind, value), kind 'b' byte, 'i' int32, 'B' bool."""
        if opcode not in self.opcodes:
            self.opcodes.append(opcode)
        self.ops.append((self.opcodes.index(opcode), inputs, outputs, options_type, options or []))

    # -- serialisation ----------------------------------------------------
    def _vec_int32(self, b, values):
        b.StartVector(4, len(values), 4)
        for v in reversed(values):
            b.PrependInt32(int(v))
        return b.EndVector()

    def _vec_tables(self, b, offsets):
        b.StartVector(4, len(offsets), 4)
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    def _quant(self, b, scale, zero_point):
        scales = scale if isinstance(scale, (list, tuple)) else [scale]
        zps = zero_point if isinstance(zero_point, (list, tuple)) else [zero_point]
        b.StartVector(4, len(scales), 4)
        for s in reversed(scales):
            b.PrependFloat32(float(s))
        sv = b.EndVector()
        b.StartVector(8, len(zps), 8)
        for z in reversed(zps):
            b.PrependInt64(int(z))
        zv = b.EndVector()
        b.StartObject(7)
        b.PrependUOffsetTRelativeSlot(2, sv, 0)
        b.PrependUOffsetTRelativeSlot(3, zv, 0)
        return b.EndObject()

    def _options(self, b, fields):
        b.StartObject(1 + max([f[0] for f in fields] + [0]))
        for fid, kind, value in fields:
            if kind == "b":
                b.PrependInt8Slot(fid, value, 0)
            elif kind == "B":
                b.PrependBoolSlot(fid, value, False)
            else:
                b.PrependInt32Slot(fid, value, 0)
        return b.EndObject()

    def save(self, path, inputs, outputs):
        b = flatbuffers.Builder(1 << 16)
        b.ForceDefaults(True)  # every field given is written, defaults included
        bufs = []
        for data in self.buffers:
            dv = b.CreateByteVector(data) if data else None
            b.StartObject(3)
            if dv is not None:
                b.PrependUOffsetTRelativeSlot(0, dv, 0)
            bufs.append(b.EndObject())
        tens = []
        for name, shape, ttype, buf, scale, zp in self.tensors:
            nm = b.CreateString(name)
            sh = self._vec_int32(b, shape)
            q = self._quant(b, scale, zp) if scale is not None else None
            b.StartObject(5)
            b.PrependUOffsetTRelativeSlot(0, sh, 0)
            b.PrependInt8Slot(1, ttype, 0)
            b.PrependUint32Slot(2, buf, 0)
            b.PrependUOffsetTRelativeSlot(3, nm, 0)
            if q is not None:
                b.PrependUOffsetTRelativeSlot(4, q, 0)
            tens.append(b.EndObject())
        ops = []
        for opcode_index, ins, outs, otype, ofields in self.ops:
            iv = self._vec_int32(b, ins)
            ov = self._vec_int32(b, outs)
            opt = self._options(b, ofields) if otype else None
            b.StartObject(5)
            b.PrependUint32Slot(0, opcode_index, 0)
            b.PrependUOffsetTRelativeSlot(1, iv, 0)
            b.PrependUOffsetTRelativeSlot(2, ov, 0)
            if otype:
                b.PrependUint8Slot(3, otype, 0)
                b.PrependUOffsetTRelativeSlot(4, opt, 0)
            ops.append(b.EndObject())
        tv = self._vec_tables(b, tens)
        inv = self._vec_int32(b, inputs)
        outv = self._vec_int32(b, outputs)
        opv = self._vec_tables(b, ops)
        sgname = b.CreateString("main")
        b.StartObject(5)
        b.PrependUOffsetTRelativeSlot(0, tv, 0)
        b.PrependUOffsetTRelativeSlot(1, inv, 0)
        b.PrependUOffsetTRelativeSlot(2, outv, 0)
        b.PrependUOffsetTRelativeSlot(3, opv, 0)
        b.PrependUOffsetTRelativeSlot(4, sgname, 0)
        sg = b.EndObject()
        codes = []
        for code in self.opcodes:
            b.StartObject(4)
            b.PrependInt8Slot(0, min(code, 127), 0)
            b.PrependInt32Slot(2, 1, 0)
            b.PrependInt32Slot(3, code, 0)
            codes.append(b.EndObject())
        cv = self._vec_tables(b, codes)
        sgv = self._vec_tables(b, [sg])
        bv = self._vec_tables(b, bufs)
        desc = b.CreateString("dlasim conformance model")
        b.StartObject(5)
        b.PrependUint32Slot(0, 3, 0)
        b.PrependUOffsetTRelativeSlot(1, cv, 0)
        b.PrependUOffsetTRelativeSlot(2, sgv, 0)
        b.PrependUOffsetTRelativeSlot(3, desc, 0)
        b.PrependUOffsetTRelativeSlot(4, bv, 0)
        model = b.EndObject()
        b.Finish(model, file_identifier=b"TFL3")
        with open(path, "wb") as f:
            f.write(b.Output())
